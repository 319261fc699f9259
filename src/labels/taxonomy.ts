import taxonomyFile from './taxonomy-v1.1.json';

/**
 * Label taxonomy v1.1, read from its one data file (taxonomy-v1.1.json). Tokens are
 * `<label>:<value>`; a criterion that was not_applicable has no token.
 */
export type LabelKind = 'category' | 'flag' | 'criterion';

export interface TaxonomyLabel {
  label: string;
  kind: LabelKind;
  values: string[];
}

export type CriterionResult = 'pass' | 'fail' | 'not_applicable';

export const TAXONOMY_VERSION: string = taxonomyFile.taxonomyVersion;
export const TAXONOMY_LABELS: readonly TaxonomyLabel[] = taxonomyFile.labels.map((l) => ({
  ...l,
  kind: l.kind as LabelKind,
}));
export const TAXONOMY_TOKENS: readonly string[] = TAXONOMY_LABELS.flatMap((l) =>
  l.values.map((v) => `${l.label}:${v}`),
);

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
