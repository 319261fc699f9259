import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { answerJson, JudgeServer, validJudgeAnswer } from '../../../test/fixtures/judge-server';
import { message, transcript } from '../../../test/factories/transcripts';
import { vocabulary } from '../taxonomy';
import { JudgeError } from './judge';
import { HttpJudge } from './http-judge';

const input = transcript([
  message('shopper', 'Do you have running shoes?'),
  message('agent', 'Here are three.', { products: 3 }),
]);

describe('http judge (POST JUDGE_URL, validated against taxonomy v1.1)', () => {
  let server: JudgeServer;
  const judge = (options: { timeoutMs?: number; attempts?: number; url?: string } = {}) =>
    new HttpJudge({
      url: options.url ?? server.url,
      taxonomy: vocabulary(),
      timeoutMs: options.timeoutMs ?? 2000,
      attempts: options.attempts ?? 3,
      backoffMs: 10,
    });

  beforeEach(async () => {
    server = await new JudgeServer().start();
  });
  afterEach(() => server.stop());

  describe('the request', () => {
    it('POSTs JSON { taxonomyVersion: "1.1", conversation, messages } to JUDGE_URL', async () => {
      server.behave = (_req, res) => answerJson(res, 200, validJudgeAnswer());
      await judge().judge(input);
      expect(server.requests).toHaveLength(1);
      const [req] = server.requests;
      expect(req.method).toBe('POST');
      expect(req.path).toBe('/judge');
      expect(req.contentType).toBe('application/json');
      expect(req.body).toEqual({
        taxonomyVersion: '1.1',
        conversation: input.conversation,
        messages: input.messages,
      });
    });
  });

  describe('a valid 200 answer', () => {
    it('becomes the verdict, with the judge model and version kept', async () => {
      server.behave = (_req, res) => answerJson(res, 200, validJudgeAnswer());
      const verdict = await judge().judge(input);
      // The answer's label, word for word; its model and version move into `judge`.
      const { model: _model, version: _version, ...label } = validJudgeAnswer();
      expect(verdict).toEqual({
        ...label,
        judge: { kind: 'http', model: 'judge-model-x', version: '2026-11' },
      });
    });

    it('accepts a null score and no rationale, model or version', async () => {
      const answer = validJudgeAnswer({ scores: { quality: null, service: 0, trust: 1 } });
      delete answer.rationale;
      delete answer.model;
      delete answer.version;
      server.behave = (_req, res) => answerJson(res, 200, answer);
      const verdict = await judge().judge(input);
      expect(verdict.scores).toEqual({ quality: null, service: 0, trust: 1 });
      expect(verdict.rationale).toBeNull();
      expect(verdict.judge).toEqual({ kind: 'http', model: null, version: null });
    });
  });

  describe('an invalid answer ends as an error naming what was wrong, after the retries', () => {
    it.each([
      ['an unknown resolution', validJudgeAnswer({ resolution: 'solved' }), 'resolution must be one of'],
      [
        'an unknown review reason',
        validJudgeAnswer({ reviewReason: 'pricing' }),
        'reviewReason must be one of',
      ],
      [
        'a flag that is not a boolean',
        validJudgeAnswer({ flags: { ...(validJudgeAnswer().flags as object), human_requested: 'yes' } }),
        'flags.human_requested must be true or false',
      ],
      [
        'a missing flag',
        validJudgeAnswer({ flags: { visitor_frustrated: true } }),
        'flags.human_requested is missing',
      ],
      [
        'a flag outside the taxonomy',
        validJudgeAnswer({ flags: { ...(validJudgeAnswer().flags as object), angry: true } }),
        'flags.angry is not in taxonomy 1.1',
      ],
      [
        'a criterion value outside pass/fail/not_applicable',
        validJudgeAnswer({ criteria: { ...(validJudgeAnswer().criteria as object), grounded: 'ok' } }),
        'criteria.grounded must be pass, fail or not_applicable',
      ],
      [
        'a score above 1',
        validJudgeAnswer({ scores: { quality: 1.2, service: 0.5, trust: 0.5 } }),
        'scores.quality must be a number from 0 to 1',
      ],
      [
        'a score that is text',
        validJudgeAnswer({ scores: { quality: 0.5, service: '0.5', trust: 0.5 } }),
        'scores.service must be a number from 0 to 1',
      ],
      ['an array body', [validJudgeAnswer()], 'the answer is not a JSON object'],
    ])('%s', async (_name, body, problem) => {
      server.behave = (_req, res) => answerJson(res, 200, body);
      const error = await judge()
        .judge(input)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JudgeError);
      expect((error as Error).message).toContain('after 3 attempts');
      expect((error as Error).message).toContain(problem);
      expect(server.requests).toHaveLength(3);
    });

    it('a body that is not JSON', async () => {
      server.behave = (_req, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"resolution": ');
      const error = await judge()
        .judge(input)
        .catch((e: unknown) => e);
      expect((error as Error).message).toBe(
        'http judge failed after 3 attempts: the answer is not valid JSON',
      );
    });
  });

  describe('a 500 answer is retried with backoff', () => {
    it('succeeds when a later attempt answers a valid label', async () => {
      server.behave = (_req, res, attempt) =>
        attempt < 3 ? res.writeHead(500).end('boom') : answerJson(res, 200, validJudgeAnswer());
      const verdict = await judge().judge(input);
      expect(verdict.resolution).toBe('resolved');
      expect(server.requests).toHaveLength(3);
    });

    it('fails with the status kept when every attempt answers 500', async () => {
      server.behave = (_req, res) => res.writeHead(500).end();
      const error = await judge({ attempts: 2 })
        .judge(input)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JudgeError);
      expect((error as Error).message).toBe('http judge failed after 2 attempts: answered HTTP 500');
      expect(server.requests).toHaveLength(2);
    });

    it('does not retry a 4xx refusal other than 408 and 429', async () => {
      server.behave = (_req, res) => res.writeHead(422).end();
      const error = await judge()
        .judge(input)
        .catch((e: unknown) => e);
      expect((error as Error).message).toBe('http judge failed: answered HTTP 422');
      expect(server.requests).toHaveLength(1);
    });

    it('retries 429', async () => {
      server.behave = (_req, res, attempt) =>
        attempt === 1 ? res.writeHead(429).end() : answerJson(res, 200, validJudgeAnswer());
      await expect(judge().judge(input)).resolves.toMatchObject({ resolution: 'resolved' });
      expect(server.requests).toHaveLength(2);
    });
  });

  describe('a slow answer times out per attempt', () => {
    it('gives up an attempt that does not answer in time and retries', async () => {
      server.behave = (_req, res, attempt) => {
        if (attempt === 1) return; // never answers
        answerJson(res, 200, validJudgeAnswer());
      };
      const verdict = await judge({ timeoutMs: 300 }).judge(input);
      expect(verdict.resolution).toBe('resolved');
      expect(server.requests).toHaveLength(2);
    });

    it('fails with the timeout kept when every attempt is too slow, including a body that stalls', async () => {
      server.behave = (_req, res, attempt) => {
        if (attempt === 1) return;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"resolution":'); // the rest never comes
      };
      const error = await judge({ timeoutMs: 300, attempts: 2 })
        .judge(input)
        .catch((e: unknown) => e);
      expect((error as Error).message).toBe(
        'http judge failed after 2 attempts: no complete answer within 300 ms',
      );
      expect(server.requests).toHaveLength(2);
    });
  });

  describe('an unreachable judge', () => {
    it('fails after the retries with the connection error kept', async () => {
      const url = server.url;
      await server.stop();
      const error = await judge({ url, attempts: 2 })
        .judge(input)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JudgeError);
      expect((error as Error).message).toBe(
        'http judge failed after 2 attempts: request failed: ECONNREFUSED',
      );
    });
  });
});
