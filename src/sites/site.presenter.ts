import { ApiProperty } from '@nestjs/swagger';
import type { SiteRecord } from './sites.repository';

export class SiteResponse {
  @ApiProperty({ example: 'site_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ example: 'https://shop.example' }) origin!: string;
  @ApiProperty({ type: [String] }) aliases!: string[];
  @ApiProperty() pageLimit!: number;
  @ApiProperty({ type: [String] }) exclusions!: string[];
  @ApiProperty({ example: '2026-11-20T10:00:00.000Z' }) createdAt!: string;
}

/** The one mapping of a site record to its public shape. */
export function presentSite(site: SiteRecord): SiteResponse {
  return {
    id: site.id,
    name: site.name,
    origin: site.origin,
    aliases: site.aliases,
    pageLimit: site.pageLimit,
    exclusions: site.exclusions,
    createdAt: site.createdAt.toISOString(),
  };
}
