import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** An object of `model`s, one entry per key (`model` is registered with STATS_EXTRA_MODELS). */
const mapOf = (model: string) => ({
  type: 'object' as const,
  additionalProperties: { $ref: `#/components/schemas/${model}` },
});

@ApiSchema({
  name: 'ConversionMetric',
  description: 'Conversations with at least one credited order of positive net, among the matching ones.',
})
class ConversionMetricSchema {
  @ApiProperty({ type: 'integer' }) converted!: number;
  @ApiProperty({ type: 'number', nullable: true, description: 'converted ÷ total; null when total is 0.' })
  rate!: number | null;
}

@ApiSchema({
  name: 'RevenueEntry',
  description: 'The orders credited to the conversations and not cancelled, in one currency (minor units).',
})
class RevenueEntrySchema {
  @ApiProperty({ example: 'EUR' }) currency!: string;
  @ApiProperty({ type: 'integer' }) orders!: number;
  @ApiProperty({ type: 'integer' }) gross!: number;
  @ApiProperty({ type: 'integer' }) refunded!: number;
  @ApiProperty({ type: 'integer' }) net!: number;
  @ApiProperty({ type: 'integer', description: 'net ÷ orders, rounded half up to the minor unit.' })
  aov!: number;
}

@ApiSchema({ name: 'CommerceMetrics', description: 'With metrics: the asked metrics.' })
class CommerceMetricsSchema {
  @ApiPropertyOptional({ type: () => ConversionMetricSchema }) conversion?: ConversionMetricSchema;
  @ApiPropertyOptional({
    type: () => [RevenueEntrySchema],
    description: 'One entry per currency, alphabetical; empty when no order.',
  })
  revenue?: RevenueEntrySchema[];
}

/** `scores`, present with scores: each asked score's mean, or null. */
const ScoreMeans = (description: string) =>
  ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'number', nullable: true },
    description,
  });

/** `metrics`, present with metrics: the asked commerce metrics of what the object counts. */
const WithMetrics = () =>
  ApiPropertyOptional({ type: () => CommerceMetricsSchema, description: 'With metrics.' });

@ApiSchema({ name: 'FacetValue' })
class FacetValueSchema {
  @ApiProperty() value!: string;
  @ApiProperty({ type: 'integer' }) count!: number;
  @WithMetrics() metrics?: CommerceMetricsSchema;
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
  @ScoreMeans('Means of the scores asked for with `scores` (null when no value).')
  scores?: Record<string, number | null>;
  @WithMetrics() metrics?: CommerceMetricsSchema;
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
  @ApiProperty(mapOf('FieldAgreement'))
  flags!: Record<string, FieldAgreementSchema>;
  @ApiProperty(mapOf('FieldAgreement'))
  criteria!: Record<string, FieldAgreementSchema>;
  @ApiProperty(mapOf('ScoreAgreement'))
  scores!: Record<string, ScoreAgreementSchema>;
}

@ApiSchema({
  name: 'Percentiles',
  description:
    'Nearest rank: the smallest value v such that at least p % of the matching conversations having the field have a value ≤ v. Exact; each null when no matching conversation has the field.',
})
class PercentilesSchema {
  @ApiProperty({ type: 'number', nullable: true }) p50!: number | null;
  @ApiProperty({ type: 'number', nullable: true }) p90!: number | null;
  @ApiProperty({ type: 'number', nullable: true }) p95!: number | null;
  @ApiProperty({ type: 'number', nullable: true }) p99!: number | null;
}

@ApiSchema({
  name: 'PreviousStats',
  description:
    "compare=previous: the same filters over the window of equal local length that ends at from; from and to in the request's zone.",
})
class PreviousStatsSchema {
  @ApiProperty({ format: 'date-time', example: '2026-10-19T00:00:00.000+02:00' }) from!: string;
  @ApiProperty({ format: 'date-time', example: '2026-10-26T00:00:00.000+01:00' }) to!: string;
  @ApiProperty({ type: 'integer' }) total!: number;
  @ApiPropertyOptional({ ...mapOf('Facet'), description: 'With facets.' })
  facets?: Record<string, FacetSchema>;
  @ApiPropertyOptional({ ...mapOf('ScoreSummary'), description: 'With scores.' })
  scores?: Record<string, ScoreSummarySchema>;
  @WithMetrics() metrics?: CommerceMetricsSchema;
}

@ApiSchema({
  name: 'Change',
  description:
    'absolute = now − previous; relative = absolute ÷ previous (0.25 for +25 %), null when previous is 0 or null.',
})
class ChangeSchema {
  @ApiProperty({ type: 'number', nullable: true }) absolute!: number | null;
  @ApiProperty({ type: 'number', nullable: true }) relative!: number | null;
}

@ApiSchema({
  name: 'StatsChange',
  description: 'compare=previous: the change of the total and of each asked score mean.',
})
class StatsChangeSchema {
  @ApiProperty({ type: () => ChangeSchema }) total!: ChangeSchema;
  @ApiPropertyOptional({ ...mapOf('Change'), description: 'With scores: the change of each mean.' })
  scores?: Record<string, ChangeSchema>;
  @ApiPropertyOptional({
    type: () => ChangeSchema,
    description: 'With metrics=conversion: the change of the conversion rate.',
  })
  conversionRate?: ChangeSchema;
}

@ApiSchema({
  name: 'BaselineDifference',
  description:
    "group − baseline, two-sided at 95 %: for a score mean, Welch's t interval and test; for a rate, Newcombe's interval and the two-proportion z-test. pValue null when the standard error is 0.",
})
class BaselineDifferenceSchema {
  @ApiProperty() difference!: number;
  @ApiProperty({ type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 }) ci95!: [
    number,
    number,
  ];
  @ApiProperty({ type: 'number', nullable: true }) pValue!: number | null;
}

@ApiSchema({
  name: 'StatsGroup',
  description: 'by: one value of the dimension over the matching conversations.',
})
class StatsGroupSchema {
  @ApiProperty() value!: string;
  @ApiProperty({ type: 'integer' }) total!: number;
  @ScoreMeans('With scores: each mean, null when no conversation of the group has the score.')
  scores?: Record<string, number | null>;
  @WithMetrics() metrics?: CommerceMetricsSchema;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: {
      nullable: true,
      allOf: [{ $ref: '#/components/schemas/BaselineDifference' }],
    },
    description:
      'With baseline, on every group but the baseline: one entry per asked score (null when either side has fewer than 2 conversations having the score) and, with metrics=conversion, conversionRate (null when either side has fewer than 2 conversations); all null when no matching conversation has the baseline value.',
  })
  vsBaseline?: Record<string, BaselineDifferenceSchema | null>;
}

@ApiSchema({ name: 'ConversationStats', description: 'Every count is exact for the filters at meta.asOf.' })
export class ConversationStatsSchema {
  @ApiProperty({ type: 'integer', description: 'Matching conversations, never capped.' }) total!: number;
  @ApiPropertyOptional({ ...mapOf('Facet'), description: 'One entry per facet asked for.' })
  facets?: Record<string, FacetSchema>;
  @ApiPropertyOptional({ ...mapOf('ScoreSummary'), description: 'One entry per score asked for.' })
  scores?: Record<string, ScoreSummarySchema>;
  @ApiPropertyOptional({
    type: () => [SeriesBucketSchema],
    description: 'With interval: one bucket per interval.',
  })
  series?: SeriesBucketSchema[];
  @ApiPropertyOptional({ type: () => AgreementSchema, description: 'With agreement=true.' })
  agreement?: AgreementSchema;
  @ApiPropertyOptional({
    ...mapOf('Percentiles'),
    description: 'With percentiles: one entry per field asked for.',
  })
  percentiles?: Record<string, PercentilesSchema>;
  @ApiPropertyOptional({
    type: () => CommerceMetricsSchema,
    description: 'With metrics: over the matching conversations.',
  })
  metrics?: CommerceMetricsSchema;
  @ApiPropertyOptional({ type: () => PreviousStatsSchema, description: 'With compare=previous.' })
  previous?: PreviousStatsSchema;
  @ApiPropertyOptional({ type: () => StatsChangeSchema, description: 'With compare=previous.' })
  change?: StatsChangeSchema;
  @ApiPropertyOptional({
    type: () => [StatsGroupSchema],
    description: 'With by: at most 100 groups, total descending, then value ascending.',
  })
  groups?: StatsGroupSchema[];
}

/** Models referenced only through additionalProperties, registered with ApiExtraModels. */
export const STATS_EXTRA_MODELS = [
  FacetSchema,
  ScoreSummarySchema,
  FieldAgreementSchema,
  ScoreAgreementSchema,
  PercentilesSchema,
  ChangeSchema,
  BaselineDifferenceSchema,
];
