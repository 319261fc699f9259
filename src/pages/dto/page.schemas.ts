import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { TIME } from '../../docs/openapi';
import { BOUNDS, DOCUMENT_FAILURES, FAILURE_REASONS } from '../import-counts';
import { PAGE_TYPES, REFUSAL_REASONS } from '../page-rules';

/** The page and page-import shapes of the OpenAPI document (the presenters map to them). */
const counts = (keys: readonly string[]) => ({
  type: 'object' as const,
  properties: Object.fromEntries(keys.map((k) => [k, { type: 'integer' as const, minimum: 0 }])),
  required: [...keys],
});

@ApiSchema({ name: 'KeyCount' })
export class KeyCountSchema {
  @ApiProperty() key!: string;
  @ApiProperty({ type: 'integer', minimum: 0 }) count!: number;
}

@ApiSchema({ name: 'ImportCounts' })
export class ImportCountsSchema {
  @ApiProperty({ enum: ['given', 'robots_txt', 'well_known', 'none'] }) sitemapSource!: string;
  @ApiProperty({ type: 'integer', minimum: 0 }) documentsRead!: number;
  @ApiProperty(counts(DOCUMENT_FAILURES)) documentsFailed!: Record<string, number>;
  @ApiProperty({ type: 'integer', minimum: 0 }) found!: number;
  @ApiProperty({ type: 'integer', minimum: 0 }) created!: number;
  @ApiProperty({ type: 'integer', minimum: 0 }) alreadyHeld!: number;
  @ApiProperty({ type: 'integer', minimum: 0 }) excluded!: number;
  @ApiProperty(counts(REFUSAL_REASONS)) refused!: Record<string, number>;
  @ApiProperty({ type: 'integer', minimum: 0 }) overCap!: number;
  @ApiProperty({ type: [KeyCountSchema] }) createdByType!: KeyCountSchema[];
  @ApiProperty({ type: 'integer', minimum: 0 }) createdByTypeRest!: number;
  @ApiProperty({ type: [KeyCountSchema] }) createdByLanguageHint!: KeyCountSchema[];
  @ApiProperty({ type: 'integer', minimum: 0 }) createdByLanguageHintRest!: number;
}

@ApiSchema({ name: 'PageImport' })
export class PageImportSchema {
  @ApiProperty({ example: 'imp_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty() siteId!: string;
  @ApiProperty({ enum: ['running', 'closed'] }) state!: string;
  @ApiProperty({ type: 'string', enum: ['completed', 'failed'], nullable: true }) outcome!: string | null;
  @ApiProperty({ type: 'string', enum: [...FAILURE_REASONS], nullable: true }) failureReason!: string | null;
  @ApiProperty({ enum: ['member', 'api_key', 'schedule'] }) startedBy!: string;
  @ApiProperty() sitemapGiven!: boolean;
  @ApiProperty({ type: 'string', nullable: true }) sitemapUrl!: string | null;
  @ApiProperty({ type: ImportCountsSchema }) counts!: ImportCountsSchema;
  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...BOUNDS] } }) boundsReached!: string[];
  @ApiProperty(TIME) startedAt!: string;
  @ApiProperty({ ...TIME, nullable: true }) endedAt!: string | null;
}

@ApiSchema({ name: 'Page' })
export class PageSchema {
  @ApiProperty({ example: 'page_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty({ example: 'https://shop.example/p/sku-42' }) url!: string;
  @ApiProperty({ enum: ['discovered'] }) status!: string;
  @ApiProperty({ enum: PAGE_TYPES }) type!: string;
  @ApiProperty({ type: 'string', nullable: true, example: 'en-gb' }) languageHint!: string | null;
  @ApiProperty({ ...TIME, nullable: true }) lastmod!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) importId!: string | null;
  @ApiProperty(TIME) createdAt!: string;
}
