/**
 * Label taxonomy v1.1, read from its one data file (taxonomy-v1.1.json): the one owner of label
 * names, values, tokens and score names. Tokens are `<label>:<value>`; a criterion that was
 * not_applicable has no token. Everything else (listing filters, judges, statistics) reads the
 * names from here.
 */
import taxonomyFile from './taxonomy-v1.1.json';

export type LabelKind = 'category' | 'flag' | 'criterion';

export interface TaxonomyLabel {
  label: string;
  kind: LabelKind;
  values: string[];
}

/** The parts of a taxonomy a verdict is checked against (the vocabulary's `labels`). */
export interface TaxonomyShape {
  taxonomyVersion: string;
  labels: ReadonlyArray<{ label: string; kind: LabelKind; values: readonly string[] }>;
}

/** A criterion's result; only pass and fail have tokens. */
export type CriterionResult = 'pass' | 'fail' | 'not_applicable';
export const CRITERION_RESULTS: readonly CriterionResult[] = ['pass', 'fail', 'not_applicable'];

/** The scores of a labeled conversation, each 0..1 or null (not part of the token vocabulary). */
export const SCORE_NAMES = ['quality', 'service', 'trust'] as const;
export type ScoreName = (typeof SCORE_NAMES)[number];

export const TAXONOMY_VERSION: string = taxonomyFile.taxonomyVersion;
export const TAXONOMY_LABELS: readonly TaxonomyLabel[] = taxonomyFile.labels.map((l) => ({
  ...l,
  kind: l.kind as LabelKind,
}));
export const TAXONOMY_TOKENS: readonly string[] = TAXONOMY_LABELS.flatMap((l) =>
  l.values.map((v) => `${l.label}:${v}`),
);

/** Taxonomy v1.1 as verdicts are checked against it. */
export const TAXONOMY: TaxonomyShape = { taxonomyVersion: TAXONOMY_VERSION, labels: TAXONOMY_LABELS };

const TOKEN_SET = new Set(TAXONOMY_TOKENS);

export const RESOLUTIONS = labelValues('resolution');
export const REVIEW_REASONS = labelValues('review_reason');
export const FLAGS: readonly string[] = TAXONOMY_LABELS.filter((l) => l.kind === 'flag').map((l) => l.label);
export const CRITERIA: readonly string[] = TAXONOMY_LABELS.filter((l) => l.kind === 'criterion').map(
  (l) => l.label,
);

function labelValues(label: string): readonly string[] {
  const found = TAXONOMY_LABELS.find((l) => l.label === label);
  if (!found) throw new Error(`taxonomy has no label ${label}`);
  return found.values;
}

export function isTaxonomyToken(token: string): boolean {
  return TOKEN_SET.has(token);
}

/** Only flag tokens end in `:true`, so only they may be used in labels.none. */
export function isTrueFlagToken(token: string): boolean {
  return TOKEN_SET.has(token) && token.endsWith(':true');
}

/** The vocabulary endpoint's document. */
export function vocabulary() {
  return {
    taxonomyVersion: TAXONOMY_VERSION,
    labels: TAXONOMY_LABELS.map((l) => ({ label: l.label, kind: l.kind, values: [...l.values] })),
    tokens: [...TAXONOMY_TOKENS],
  };
}
