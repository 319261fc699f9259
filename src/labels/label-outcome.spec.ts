import { describe, expect, it } from '@jest/globals';
import { labeledOutcome } from '../../test/factories/conversations';
import { thrownBy } from '../../test/support/thrown';
import {
  checkVerdict,
  failedCriteria,
  InvalidLabelError,
  LabeledOutcome,
  labelTokens,
  validateLabeledOutcome,
} from './label-outcome';
import { CRITERIA, FLAGS, SCORE_NAMES, TAXONOMY_TOKENS } from './taxonomy';

const faultsOf = (outcome: LabeledOutcome): string =>
  thrownBy(() => validateLabeledOutcome(outcome), InvalidLabelError, 'the outcome to be refused').message;

describe('label outcome', () => {
  describe('a labeled outcome follows taxonomy v1.1 before it is stored', () => {
    it('accepts every flag false or true, every criterion pass, fail or not_applicable, scores 0..1 or null', () => {
      expect(() => validateLabeledOutcome(labeledOutcome())).not.toThrow();
      expect(() =>
        validateLabeledOutcome(
          labeledOutcome({
            raised: [...FLAGS],
            failing: [CRITERIA[0]],
            notApplicable: [CRITERIA[1]],
            scores: { quality: 0, service: 1, trust: null },
            rationale: undefined,
          }),
        ),
      ).not.toThrow();
    });

    it('refuses an outcome outside the taxonomy, naming every fault in one error', () => {
      const message = faultsOf(
        labeledOutcome({
          resolution: 'fixed',
          reviewReason: 'mood',
          flags: { angry: true },
          criteria: { grounded: 'maybe' as never },
          scores: { quality: 2, service: -0.1, trust: Number.NaN },
          judge: { kind: '' },
        }),
      );
      expect(message).toMatch(/^label outcome does not follow taxonomy 1\.1: /);
      for (const fault of [
        'resolution must be one of resolved, partially_resolved, unresolved, abandoned (got "fixed")',
        'reviewReason must be one of',
        `flags.${FLAGS[0]} is missing`,
        'flags.angry is not in taxonomy 1.1',
        'criteria.grounded must be pass, fail or not_applicable (got "maybe")',
        `criteria.${CRITERIA[1]} is missing`,
        'scores.quality must be a number from 0 to 1 or null',
        'scores.service must be a number from 0 to 1 or null',
        'scores.trust must be a number from 0 to 1 or null',
        'judge.kind is missing',
      ])
        expect(message).toContain(fault);
    });

    it('refuses a score the taxonomy does not name', () => {
      const outcome = labeledOutcome();
      const message = faultsOf({ ...outcome, scores: { ...outcome.scores, delight: 1 } as never });
      expect(message).toContain('scores.delight is not a known score');
    });
  });

  describe('a judge answer is checked against the same rules', () => {
    it('returns the verdict with the model and version the answer names', () => {
      const { status: _status, judge: _judge, labeledAt: _at, ...answer } = labeledOutcome();
      expect(checkVerdict({ ...answer, model: 'm-1', version: '7' })).toEqual({
        verdict: { ...answer, rationale: 'test' },
        model: 'm-1',
        version: '7',
      });
    });

    it('names the score names of the taxonomy when scores are missing', () => {
      const { scores: _scores, ...answer } = labeledOutcome();
      expect(checkVerdict(answer)).toEqual({
        problems: [`scores must be an object with ${SCORE_NAMES.join(', ')}`],
      });
    });
  });

  describe('tokens: both categories, every flag, and criteria that passed or failed', () => {
    it('gives taxonomy tokens; a not_applicable criterion has none', () => {
      const tokens = labelTokens(
        labeledOutcome({
          resolution: 'unresolved',
          raised: ['visitor_frustrated'],
          failing: ['grounded'],
          notApplicable: ['on_brand'],
        }),
      );
      expect(tokens).toHaveLength(2 + FLAGS.length + CRITERIA.length - 1);
      expect(tokens.every((token) => TAXONOMY_TOKENS.includes(token))).toBe(true);
      expect(tokens).toEqual(
        expect.arrayContaining([
          'resolution:unresolved',
          'review_reason:none',
          'visitor_frustrated:true',
          'human_requested:false',
          'grounded:fail',
          'answered_question:pass',
        ]),
      );
      expect(tokens.filter((token) => token.startsWith('on_brand:'))).toEqual([]);
    });

    it('lists the failed criteria in taxonomy order', () => {
      const failing = [CRITERIA[3], CRITERIA[0]];
      expect(failedCriteria(labeledOutcome({ failing }).criteria)).toEqual([CRITERIA[0], CRITERIA[3]]);
    });
  });
});
