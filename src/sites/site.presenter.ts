import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { REDACTION_PATTERNS } from '../redaction/redaction-patterns';
import type { SiteRecord } from './sites.repository';

@ApiSchema({ name: 'SiteRedaction' })
export class SiteRedactionResponse {
  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...REDACTION_PATTERNS] },
    description: 'Patterns erased when conversations are recorded or appended to.',
  })
  patterns!: string[];
}

export class SiteResponse {
  @ApiProperty({ example: 'site_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ example: 'https://shop.example' }) origin!: string;
  @ApiProperty({ type: [String] }) aliases!: string[];
  @ApiProperty() pageLimit!: number;
  @ApiProperty({ type: [String] }) exclusions!: string[];
  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: 3650,
    description: 'Days a conversation is kept after its updatedAt; null: forever.',
  })
  retentionDays!: number | null;
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: 720,
    description:
      "Hours before an order in which a visitor's conversation may be credited with it (outcomes-v1 §2).",
  })
  attributionWindowHours!: number;
  @ApiProperty({ type: () => SiteRedactionResponse }) redaction!: SiteRedactionResponse;
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
    retentionDays: site.retentionDays,
    attributionWindowHours: site.attributionWindowHours,
    redaction: { patterns: site.redactionPatterns },
    createdAt: site.createdAt.toISOString(),
  };
}
