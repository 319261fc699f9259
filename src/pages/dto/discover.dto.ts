import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength, ValidateBy, ValidationOptions } from 'class-validator';
import { SitePath } from '../../docs/openapi';

/** An absolute http(s) address with a host and no credentials. */
export function isAbsoluteHttpUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !/^https?:\/\//i.test(value)) return false;
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      url.hostname !== '' &&
      !url.username &&
      !url.password
    );
  } catch {
    return false;
  }
}

function IsAbsoluteHttpUrl(options?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isUrl',
      validator: {
        validate: isAbsoluteHttpUrl,
        defaultMessage: () => 'must be an absolute http(s) address, e.g. https://shop.example/sitemap.xml',
      },
    },
    options,
  );
}

export class DiscoverPagesDto {
  @ApiPropertyOptional({
    example: 'https://shop.example/sitemap.xml',
    maxLength: 2048,
    description:
      'Sitemap address on the site. Without it the import looks in robots.txt, then in the usual places.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  @IsAbsoluteHttpUrl()
  sitemapUrl?: string;
}

/** The path of a route on one page import: the site's id, then its own (`:importId`). */
export class ImportPath extends SitePath('importId') {}
