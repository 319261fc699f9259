import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { message, transcript } from '../../../test/factories/transcripts';
import { checkVerdict } from '../label-outcome';
import { vocabulary } from '../taxonomy';
import { HeuristicJudge } from './heuristic-judge';
import type { JudgeMessage } from './judge';

const judge = new HeuristicJudge();
/** The judge's verdict on these messages (no impressions or clicks). */
const judged = (...messages: JudgeMessage[]) => judge.judge(transcript(messages));

const anyMessage = fc
  .record({
    role: fc.constantFrom<JudgeMessage['role']>('shopper', 'agent', 'system'),
    text: fc.oneof(
      fc.string(),
      fc.constantFrom(
        'thanks!',
        'this is useless',
        'I want a human',
        'refund please',
        'you idiot',
        'I CANNOT BELIEVE THIS AT ALL',
        '',
      ),
    ),
    rating: fc.constantFrom<undefined | 'positive' | 'negative'>(undefined, 'positive', 'negative'),
    products: fc.nat(3),
  })
  .map((m) => message(m.role, m.text, { rating: m.rating, products: m.products }));

describe('heuristic judge', () => {
  describe('always gives a valid taxonomy v1.1 label', () => {
    it('for any transcript, ratings and engagement', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(anyMessage, { maxLength: 12 }),
          fc.nat(20),
          fc.nat(20),
          async (messages, impressions, clicks) => {
            const verdict = await judge.judge(transcript(messages, { impressions, clicks }));
            const checked = checkVerdict(
              { ...verdict, model: verdict.judge.model, version: verdict.judge.version, judge: undefined },
              vocabulary(),
            );
            expect(checked).toHaveProperty('verdict');
            for (const score of Object.values(verdict.scores)) {
              expect(typeof score).toBe('number');
            }
          },
        ),
        { numRuns: 300 },
      );
    });
  });

  describe('is deterministic', () => {
    it('gives the same verdict for the same conversation', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(anyMessage, { maxLength: 8 }), fc.nat(5), async (messages, clicks) => {
          const input = transcript(messages, { clicks });
          expect(await judge.judge(input)).toEqual(await judge.judge(structuredClone(input)));
        }),
        { numRuns: 100 },
      );
    });
  });

  describe('resolution rules', () => {
    it('resolved: answered and rated positively', async () => {
      const v = await judged(
        message('shopper', 'Red shoes size 42?'),
        message('agent', 'Here you go.', { rating: 'positive', products: 2 }),
      );
      expect(v).toMatchObject({ resolution: 'resolved', reviewReason: 'none' });
      expect(v.criteria).toMatchObject({
        grounded: 'pass',
        answered_question: 'pass',
        product_accuracy: 'pass',
      });
      expect(v.judge).toEqual({ kind: 'heuristic', model: null, version: '1' });
    });

    it('resolved: the shopper thanks the assistant in any of the six languages', async () => {
      for (const thanks of [
        'Thanks a lot',
        'Merci beaucoup',
        'Danke!',
        'grazie mille',
        'muchas gracias',
        'bedankt',
      ]) {
        const v = await judged(
          message('shopper', 'Question'),
          message('agent', 'Answer'),
          message('shopper', thanks),
          message('agent', 'You are welcome'),
        );
        expect(v.resolution).toBe('resolved');
      }
    });

    it('resolved: a closing thank-you needs no answer', async () => {
      const v = await judged(
        message('shopper', 'Is it in stock?'),
        message('agent', 'Yes.'),
        message('shopper', 'Perfect, thank you'),
      );
      expect(v.resolution).toBe('resolved');
      expect(v.criteria.answered_question).toBe('pass');
    });

    it('resolved: the shopper clicked a product (and that is purchase intent)', async () => {
      const v = await judge.judge(
        transcript([message('shopper', 'Something for hiking'), message('agent', 'These', { products: 3 })], {
          impressions: 3,
          clicks: 1,
        }),
      );
      expect(v.resolution).toBe('resolved');
      expect(v.flags.purchase_intent).toBe(true);
    });

    it('unresolved with a technical review: the last shopper message got no answer', async () => {
      const v = await judged(message('shopper', 'Hello?'));
      expect(v).toMatchObject({ resolution: 'unresolved', reviewReason: 'technical' });
      expect(v.criteria).toEqual({
        grounded: 'not_applicable',
        answered_question: 'fail',
        product_accuracy: 'not_applicable',
        policy_compliant: 'not_applicable',
        on_brand: 'not_applicable',
        safe_response: 'not_applicable',
      });
    });

    it('unresolved with a product review: a negative rating on product cards fails grounding and accuracy', async () => {
      const v = await judged(
        message('shopper', 'Waterproof jacket?'),
        message('agent', 'This one', { products: 1, rating: 'negative' }),
      );
      expect(v).toMatchObject({ resolution: 'unresolved', reviewReason: 'product' });
      expect(v.criteria).toMatchObject({
        grounded: 'fail',
        product_accuracy: 'fail',
        answered_question: 'fail',
      });
    });

    it('partially_resolved: ratings both positive and negative', async () => {
      const v = await judged(
        message('shopper', 'a'),
        message('agent', 'b', { rating: 'positive' }),
        message('shopper', 'c'),
        message('agent', 'd', { rating: 'negative' }),
      );
      expect(v).toMatchObject({ resolution: 'partially_resolved', reviewReason: 'service' });
    });

    it('abandoned: one question, one answer, no reaction at all', async () => {
      const v = await judged(message('shopper', 'Opening hours?'), message('agent', 'We are online only.'));
      expect(v.resolution).toBe('abandoned');
    });
  });

  describe('flags and review reasons', () => {
    it('a shopper asking for a human is flagged and reviewed for service', async () => {
      const v = await judged(
        message('shopper', 'Can I talk to a real person please'),
        message('agent', 'I can help.'),
      );
      expect(v.flags.human_requested).toBe(true);
      expect(v).toMatchObject({ resolution: 'partially_resolved', reviewReason: 'service' });
    });

    it('a frustrated shopper is flagged, and lowers the service score', async () => {
      const calm = await judged(
        message('shopper', 'a'),
        message('agent', 'b'),
        message('shopper', 'c'),
        message('agent', 'd'),
      );
      const angry = await judged(
        message('shopper', 'a'),
        message('agent', 'b'),
        message('shopper', 'this is useless'),
        message('agent', 'd'),
      );
      expect(angry.flags.visitor_frustrated).toBe(true);
      expect(calm.flags.visitor_frustrated).toBe(false);
      expect(angry.scores.service!).toBeLessThan(calm.scores.service!);
    });

    it('an abusive shopper is flagged and reviewed for safety', async () => {
      const v = await judged(message('shopper', 'you stupid bot'), message('agent', 'Sorry to hear that.'));
      expect(v.flags.abusive_visitor).toBe(true);
      expect(v.reviewReason).toBe('safety');
    });

    it('a policy question rated negatively fails policy_compliant and is reviewed for policy', async () => {
      const v = await judged(
        message('shopper', 'How do I get a refund?'),
        message('agent', 'No idea.', { rating: 'negative' }),
      );
      expect(v.criteria.policy_compliant).toBe('fail');
      expect(v.reviewReason).toBe('policy');
    });

    it('an agent declining a request is out_of_scope', async () => {
      const v = await judged(
        message('shopper', 'Write my homework'),
        message('agent', 'Sorry, I can only help with our products.'),
      );
      expect(v.flags.out_of_scope).toBe(true);
    });

    it('matches whole words only ("domain" is not abuse, "ordering" is not "order")', async () => {
      const v = await judged(
        message('shopper', 'What is the domain of this ordering system'),
        message('agent', 'x'),
      );
      expect(v.flags).toMatchObject({ abusive_visitor: false, purchase_intent: false });
    });

    it('an agent shouting fails on_brand', async () => {
      const v = await judged(message('shopper', 'hi'), message('agent', 'WE HAVE THE BEST DEALS TODAY ONLY'));
      expect(v.criteria.on_brand).toBe('fail');
    });
  });

  describe('scores', () => {
    it('rank a clearly good conversation above a clearly bad one on every score', async () => {
      const good = await judge.judge(
        transcript(
          [
            message('shopper', 'shoes?'),
            message('agent', 'these', { products: 2, rating: 'positive' }),
            message('shopper', 'thanks'),
          ],
          { clicks: 1 },
        ),
      );
      const bad = await judged(
        message('shopper', 'shoes?'),
        message('agent', 'these', { products: 2, rating: 'negative' }),
        message('shopper', 'useless'),
      );
      for (const name of ['quality', 'service', 'trust'] as const)
        expect(good.scores[name]!).toBeGreaterThan(bad.scores[name]!);
      expect(good.scores).toEqual({ quality: 1, service: 1, trust: 1 });
    });
  });
});
