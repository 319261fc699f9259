import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'FacetValue' })
class FacetValueSchema {
  @ApiProperty() value!: string;
  @ApiProperty({ type: 'integer' }) count!: number;
}

@ApiSchema({ name: 'Facet', description: 'Non-zero counts, count descending then value; at most 1,000.' })
class FacetSchema {
  @ApiProperty({ type: () => [FacetValueSchema] }) values!: FacetValueSchema[];
  @ApiProperty({ type: 'integer', description: 'Sum of the counts of the values beyond the listed ones.' })
  other!: number;
}

@ApiSchema({ name: 'HistogramBin', description: '[from, to), the last bin including 1.' })
class HistogramBinSchema {
  @ApiProperty() from!: number;
  @ApiProperty() to!: number;
  @ApiProperty({ type: 'integer' }) count!: number;
}

@ApiSchema({ name: 'ScoreSummary', description: 'Over matching conversations with a value for the score.' })
class ScoreSummarySchema {
  @ApiProperty({ type: 'integer' }) count!: number;
  @ApiProperty({ type: 'number', nullable: true }) mean!: number | null;
  @ApiProperty({ type: 'number', nullable: true }) min!: number | null;
  @ApiProperty({ type: 'number', nullable: true }) max!: number | null;
  @ApiProperty({ type: () => [HistogramBinSchema] }) histogram!: HistogramBinSchema[];
}

@ApiSchema({ name: 'SeriesBucket' })
class SeriesBucketSchema {
  @ApiProperty({
    description: 'Local start of the bucket with its offset.',
    example: '2026-11-01T00:00:00.000+01:00',
  })
  start!: string;
  @ApiProperty({ type: 'integer' }) count!: number;
  @ApiProperty({ type: 'integer' }) labeled!: number;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'number', nullable: true },
    description: 'Means of the scores asked for with `scores` (null when no value).',
  })
  scores?: Record<string, number | null>;
}

/** A label value in a confusion pair: a category or criterion result (string) or a flag (boolean). */
const LABEL_VALUE = { oneOf: [{ type: 'string' }, { type: 'boolean' }] };

@ApiSchema({ name: 'ConfusionPair' })
class ConfusionPairSchema {
  @ApiProperty(LABEL_VALUE) judge!: string | boolean;
  @ApiProperty(LABEL_VALUE) review!: string | boolean;
  @ApiProperty({ type: 'integer' }) count!: number;
}

@ApiSchema({ name: 'FieldAgreement', description: 'One label field over the reviewed conversations.' })
class FieldAgreementSchema {
  @ApiProperty({
    type: 'number',
    nullable: true,
    description: 'Share of reviews that left the field as the judge had it; null without reviews.',
  })
  agreement!: number | null;
  @ApiProperty({ type: 'number', nullable: true, description: "Cohen's kappa; null when undefined." })
  kappa!: number | null;
  @ApiProperty({
    type: () => [ConfusionPairSchema],
    description: 'Every (judge, review) pair, count descending.',
  })
  confusion!: ConfusionPairSchema[];
}

@ApiSchema({ name: 'ScoreAgreement', description: 'Over reviewed conversations with both values.' })
class ScoreAgreementSchema {
  @ApiProperty({ type: 'integer' }) count!: number;
  @ApiProperty({ type: 'number', nullable: true }) meanAbsoluteDifference!: number | null;
  @ApiProperty({ type: 'number', nullable: true, description: 'Mean of review minus judge.' }) bias!:
    number | null;
}

@ApiSchema({
  name: 'Agreement',
  description: 'Judge versus human over the matching conversations with a current review (agreement=true).',
})
class AgreementSchema {
  @ApiProperty({ type: 'integer' }) reviewed!: number;
  @ApiProperty({ type: () => FieldAgreementSchema }) resolution!: FieldAgreementSchema;
  @ApiProperty({ type: () => FieldAgreementSchema }) reviewReason!: FieldAgreementSchema;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/FieldAgreement' } })
  flags!: Record<string, FieldAgreementSchema>;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/FieldAgreement' } })
  criteria!: Record<string, FieldAgreementSchema>;
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/ScoreAgreement' } })
  scores!: Record<string, ScoreAgreementSchema>;
}

@ApiSchema({ name: 'ConversationStats', description: 'Every count is exact for the filters at meta.asOf.' })
export class ConversationStatsSchema {
  @ApiProperty({ type: 'integer', description: 'Matching conversations, never capped.' }) total!: number;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/Facet' },
    description: 'One entry per facet asked for.',
  })
  facets?: Record<string, FacetSchema>;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/ScoreSummary' },
    description: 'One entry per score asked for.',
  })
  scores?: Record<string, ScoreSummarySchema>;
  @ApiPropertyOptional({
    type: () => [SeriesBucketSchema],
    description: 'With interval: one bucket per interval.',
  })
  series?: SeriesBucketSchema[];
  @ApiPropertyOptional({ type: () => AgreementSchema, description: 'With agreement=true.' })
  agreement?: AgreementSchema;
}

/** Models referenced only through additionalProperties, registered with ApiExtraModels. */
export const STATS_EXTRA_MODELS = [
  FacetSchema,
  ScoreSummarySchema,
  FieldAgreementSchema,
  ScoreAgreementSchema,
];
