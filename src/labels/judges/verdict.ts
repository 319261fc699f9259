import type { CriterionResult, JudgeScores } from './judge';

/** The parts of a taxonomy a verdict is checked against (the vocabulary's `labels`). */
export interface TaxonomyShape {
  taxonomyVersion: string;
  labels: ReadonlyArray<{
    label: string;
    kind: 'category' | 'flag' | 'criterion';
    values: readonly string[];
  }>;
}

export const SCORE_NAMES = ['quality', 'service', 'trust'] as const;
const CRITERION_RESULTS: readonly CriterionResult[] = ['pass', 'fail', 'not_applicable'];
const MAX_RATIONALE = 4000;
const MAX_NAME = 200;

export interface CheckedVerdict {
  resolution: string;
  reviewReason: string;
  flags: Record<string, boolean>;
  criteria: Record<string, CriterionResult>;
  scores: JudgeScores;
  rationale: string | null;
  model: string | null;
  version: string | null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function categoryValues(taxonomy: TaxonomyShape, label: string): readonly string[] {
  const entry = taxonomy.labels.find((l) => l.label === label && l.kind === 'category');
  if (!entry) throw new Error(`taxonomy ${taxonomy.taxonomyVersion} has no category ${label}`);
  return entry.values;
}

/**
 * Checks a judge's answer against the taxonomy: both categories with known values, every flag
 * a boolean, every criterion pass/fail/not_applicable, no unknown names, scores 0..1 or null.
 * Returns the verdict, or every problem found (so a failed label says all that was wrong).
 */
export function checkVerdict(
  raw: unknown,
  taxonomy: TaxonomyShape,
): { verdict: CheckedVerdict } | { problems: string[] } {
  const problems: string[] = [];
  if (!isPlainObject(raw)) return { problems: ['the answer is not a JSON object'] };

  const category = (field: string, label: string): string => {
    const value = raw[field];
    const allowed = categoryValues(taxonomy, label);
    if (typeof value !== 'string' || !allowed.includes(value)) {
      problems.push(
        `${field} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value) ?? 'nothing'})`,
      );
    }
    return value as string;
  };
  const resolution = category('resolution', 'resolution');
  const reviewReason = category('reviewReason', 'review_reason');

  const names = (
    field: string,
    kind: 'flag' | 'criterion',
    accepts: (v: unknown) => boolean,
    expected: string,
  ) => {
    const value = raw[field];
    const known = taxonomy.labels.filter((l) => l.kind === kind).map((l) => l.label);
    if (!isPlainObject(value)) {
      problems.push(`${field} must be an object with ${known.join(', ')}`);
      return {};
    }
    for (const name of known) {
      if (!(name in value)) problems.push(`${field}.${name} is missing`);
      else if (!accepts(value[name]))
        problems.push(`${field}.${name} must be ${expected} (got ${JSON.stringify(value[name])})`);
    }
    for (const name of Object.keys(value))
      if (!known.includes(name))
        problems.push(`${field}.${name} is not in taxonomy ${taxonomy.taxonomyVersion}`);
    return Object.fromEntries(known.map((name) => [name, value[name]]));
  };
  const flags = names('flags', 'flag', (v) => typeof v === 'boolean', 'true or false') as Record<
    string,
    boolean
  >;
  const criteria = names(
    'criteria',
    'criterion',
    (v) => CRITERION_RESULTS.includes(v as CriterionResult),
    'pass, fail or not_applicable',
  ) as Record<string, CriterionResult>;

  const scores: JudgeScores = { quality: null, service: null, trust: null };
  if (!isPlainObject(raw.scores)) problems.push(`scores must be an object with ${SCORE_NAMES.join(', ')}`);
  else {
    for (const name of SCORE_NAMES) {
      const v = raw.scores[name];
      if (v === null) continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1)
        problems.push(
          `scores.${name} must be a number from 0 to 1 or null (got ${JSON.stringify(v) ?? 'nothing'})`,
        );
      else scores[name] = v;
    }
    for (const name of Object.keys(raw.scores))
      if (!(SCORE_NAMES as readonly string[]).includes(name))
        problems.push(`scores.${name} is not a known score`);
  }

  const optionalText = (field: string, max: number): string | null => {
    const v = raw[field];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string' || v.length > max) {
      problems.push(`${field} must be a string of at most ${max} characters`);
      return null;
    }
    return v;
  };
  const rationale = optionalText('rationale', MAX_RATIONALE);
  const model = optionalText('model', MAX_NAME);
  const version = optionalText('version', MAX_NAME);

  if (problems.length > 0) return { problems };
  return { verdict: { resolution, reviewReason, flags, criteria, scores, rationale, model, version } };
}
