import {
  CRITERIA,
  CRITERION_RESULTS,
  CriterionResult,
  FLAGS,
  SCORE_NAMES,
  ScoreName,
  TAXONOMY,
  TAXONOMY_VERSION,
  TaxonomyShape,
} from './taxonomy';

/**
 * The outcome of labeling one conversation, in one place: its shape, its check against the
 * taxonomy and the tokens it gives. Judges return a verdict, the labeling process turns it into
 * an outcome, the label writer stores it.
 */

const MAX_RATIONALE = 4000;
const MAX_NAME = 200;

export type LabelScores = Record<ScoreName, number | null>;

/** What a judge decides about one conversation under taxonomy v1.1. */
export interface LabelVerdict {
  resolution: string;
  reviewReason: string;
  /** Every flag of the taxonomy, true or false. */
  flags: Record<string, boolean>;
  /** Every criterion of the taxonomy. */
  criteria: Record<string, CriterionResult>;
  scores: LabelScores;
  rationale?: string | null;
}

export interface JudgeInfo {
  /** e.g. `heuristic` or `http`. */
  kind: string;
  model?: string | null;
  version?: string | null;
}

/** A judge's verdict on one conversation, as stored. */
export interface LabeledOutcome extends LabelVerdict {
  status: 'labeled';
  judge: JudgeInfo;
  labeledAt?: Date;
}

/** The judge failed after its retries; the error is kept on the record. */
export interface FailedOutcome {
  status: 'failed';
  error: string;
  judge?: JudgeInfo | null;
}

/** No shopper message, or last activity beyond the labeling horizon. */
export interface NotEligibleOutcome {
  status: 'not_eligible';
  /** Why (kept in the record's `error` column for operators; not a judge error). */
  reason?: string;
}

export type LabelOutcome = LabeledOutcome | FailedOutcome | NotEligibleOutcome;

/** Thrown when an outcome does not follow the taxonomy: a programming or judge-validation error. */
export class InvalidLabelError extends Error {}

/** A judge's answer that passed the check: the verdict, and the model and version it names. */
export interface CheckedVerdict {
  verdict: LabelVerdict & { rationale: string | null };
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
 * Checks an answer (a judge's JSON, or an outcome about to be stored) against the taxonomy:
 * both categories with known values, every flag a boolean, every criterion
 * pass/fail/not_applicable, no unknown names, scores 0..1 or null. Returns the verdict, or every
 * problem found (so a failed label says all that was wrong).
 */
export function checkVerdict(
  raw: unknown,
  taxonomy: TaxonomyShape = TAXONOMY,
): CheckedVerdict | { problems: string[] } {
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

  const scores: LabelScores = { quality: null, service: null, trust: null };
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
  return { verdict: { resolution, reviewReason, flags, criteria, scores, rationale }, model, version };
}

/** Checks an outcome against taxonomy v1.1 before it is stored; throws InvalidLabelError naming every fault. */
export function validateLabeledOutcome(outcome: LabeledOutcome): void {
  const checked = checkVerdict({
    ...outcome,
    model: outcome.judge?.model,
    version: outcome.judge?.version,
  });
  const problems = 'problems' in checked ? checked.problems : [];
  if (!outcome.judge?.kind) problems.push('judge.kind is missing');
  if (problems.length)
    throw new InvalidLabelError(
      `label outcome does not follow taxonomy ${TAXONOMY_VERSION}: ${problems.join('; ')}`,
    );
}

/** Tokens of a labeled outcome, e.g. resolution:unresolved, visitor_frustrated:true, grounded:fail. */
export function labelTokens(
  outcome: Pick<LabelVerdict, 'resolution' | 'reviewReason' | 'flags' | 'criteria'>,
): string[] {
  const tokens = [`resolution:${outcome.resolution}`, `review_reason:${outcome.reviewReason}`];
  for (const flag of FLAGS) tokens.push(`${flag}:${outcome.flags[flag] ? 'true' : 'false'}`);
  for (const criterion of CRITERIA) {
    const result = outcome.criteria[criterion];
    if (result === 'pass' || result === 'fail') tokens.push(`${criterion}:${result}`);
  }
  return tokens;
}

export function failedCriteria(criteria: Record<string, CriterionResult>): string[] {
  return CRITERIA.filter((c) => criteria[c] === 'fail');
}

// ---- The effective label -----------------------------------------------------------------
/**
 * The effective label of a conversation, in one place (workflows-v1 §2): the judge's record with
 * every field a current review sets put over it (a score the review sets to null is null). A
 * field the review does not set is the judge's: the reviewer confirmed it. The conversation's
 * label columns (LabelRecordsRepository.applyEffective) hold what this computes, and every
 * reader (filters, statistics, exports, events, both engines) reads those columns.
 */

/** The label fields of a judge's labeled record: its verdict but the rationale. */
export type JudgeLabel = Omit<LabelVerdict, 'rationale'>;

/** The label fields a review sets: each absent field is the judge's. */
export interface ReviewFields {
  resolution?: string;
  reviewReason?: string;
  flags?: Record<string, boolean>;
  criteria?: Record<string, CriterionResult>;
  scores?: Partial<LabelScores>;
}

/** The effective label with what the conversation row derives from it. */
export interface EffectiveLabel extends JudgeLabel {
  failedCriteria: string[];
  tokens: string[];
}

const has = (o: object | undefined, key: string): boolean =>
  o !== undefined && Object.prototype.hasOwnProperty.call(o, key);

/** The judge's label with the review's fields over it (the judge's alone when `review` is absent). */
export function effectiveLabel(judge: JudgeLabel, review?: ReviewFields): EffectiveLabel {
  const label: JudgeLabel = {
    resolution: review?.resolution ?? judge.resolution,
    reviewReason: review?.reviewReason ?? judge.reviewReason,
    flags: Object.fromEntries(
      FLAGS.map((f) => [f, has(review?.flags, f) ? review!.flags![f] : judge.flags[f]]),
    ),
    criteria: Object.fromEntries(
      CRITERIA.map((c) => [c, has(review?.criteria, c) ? review!.criteria![c] : judge.criteria[c]]),
    ) as Record<string, CriterionResult>,
    scores: Object.fromEntries(
      SCORE_NAMES.map((s) => [s, has(review?.scores, s) ? (review!.scores![s] ?? null) : judge.scores[s]]),
    ) as LabelScores,
  };
  return { ...label, failedCriteria: failedCriteria(label.criteria), tokens: labelTokens(label) };
}

/** One changed field of a review: the judge's value and the review's. */
export interface FieldChange {
  judge: unknown;
  review: unknown;
}

/**
 * The fields the review sets to a value other than the judge's, keyed `resolution`,
 * `reviewReason`, `flags.<name>`, `criteria.<name>`, `scores.<name>`, in the taxonomy's order.
 */
export function reviewChanges(judge: JudgeLabel, review: ReviewFields): Record<string, FieldChange> {
  const changes: Record<string, FieldChange> = {};
  const put = (key: string, before: unknown, after: unknown) => {
    if (before !== after) changes[key] = { judge: before, review: after };
  };
  if (review.resolution !== undefined) put('resolution', judge.resolution, review.resolution);
  if (review.reviewReason !== undefined) put('reviewReason', judge.reviewReason, review.reviewReason);
  for (const f of FLAGS) if (has(review.flags, f)) put(`flags.${f}`, judge.flags[f], review.flags![f]);
  for (const c of CRITERIA)
    if (has(review.criteria, c)) put(`criteria.${c}`, judge.criteria[c], review.criteria![c]);
  for (const s of SCORE_NAMES)
    if (has(review.scores, s)) put(`scores.${s}`, judge.scores[s], review.scores![s] ?? null);
  return changes;
}
