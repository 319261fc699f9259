import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { newId } from '../../src/common/ids/ids';
import { LabelWriter } from '../../src/labeling/label-writer.service';
import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { LabelScanService, SCAN_BATCH_SIZE } from '../../src/labeling/label-scan.service';
import { LABEL_JOB, LABELING_QUEUE, labelJobId } from '../../src/labeling/labeling-queue';
import { LabelingService } from '../../src/labeling/labeling.service';
import { answerJson, JudgeServer, validJudgeAnswer } from '../fixtures/judge-server';
import { insertConversation, labelHistory, labelState, RowMessage } from '../factories/conversation-rows';
import { eventually } from '../setup/isolated-database';
import { LabelingApp, labelingAppPerSuite, startLabelingApp } from '../setup/labeling-app';
import { TestApp } from '../setup/test-app';

const DAY_MINUTES = 24 * 60;
const chat: RowMessage[] = [
  { role: 'shopper', text: 'Do you have trail shoes in size 42?', minutesAgo: 3 },
  { role: 'agent', text: 'Yes, here are two models.', rating: 'positive', minutesAgo: 2 },
  { role: 'shopper', text: 'Thanks!', minutesAgo: 1 },
];

async function settled(t: TestApp, conversationId: string, status = 'labeled') {
  return eventually(async () => {
    const state = await labelState(t.app, conversationId);
    return state.labelStatus === status ? state : undefined;
  }, `${conversationId} becomes ${status}`);
}

describe('labeling process with the heuristic judge (WORKERS=on, LABEL_QUIET_MINUTES=0)', () => {
  let t: TestApp;
  let site: LabelingApp['site'];
  labelingAppPerSuite({}, 'labeling-heuristic:', (app) => ({ t, site } = app));

  describe('pending → labeled once the conversation goes quiet, with no manual step', () => {
    it.each(['web', 'hosted', 'playground'] as const)(
      'labels a %s conversation: summary columns, tokens and one current record',
      async (channel) => {
        const conv = await insertConversation(t.app, site, chat, { channel });
        const state = await settled(t, conv.id);
        expect(state.tokens).toEqual(
          expect.arrayContaining([
            'resolution:resolved',
            'review_reason:none',
            'answered_question:pass',
            'visitor_frustrated:false',
          ]),
        );
        expect(state.quality).toBeGreaterThan(0);
        const history = await labelHistory(t.app, conv.id);
        expect(history).toEqual([
          expect.objectContaining({
            id: state.currentLabelId,
            status: 'labeled',
            isCurrent: true,
            judgeKind: 'heuristic',
          }),
        ]);
        expect(history[0].tokens).toEqual(state.tokens);
      },
    );
  });

  describe('not_eligible: no shopper message, or last activity beyond the 30-day horizon when due', () => {
    it('a conversation with no shopper message is not_eligible', async () => {
      const conv = await insertConversation(t.app, site, [
        { role: 'agent', text: 'Hello! How can I help?', minutesAgo: 1 },
      ]);
      await settled(t, conv.id, 'not_eligible');
      expect(await labelHistory(t.app, conv.id)).toEqual([
        expect.objectContaining({ status: 'not_eligible', isCurrent: true, error: 'no shopper message' }),
      ]);
      expect((await labelState(t.app, conv.id)).tokens).toEqual([]);
    });

    it('a conversation whose last activity is over 30 days old is not_eligible', async () => {
      const old = chat.map((m) => ({ ...m, minutesAgo: 31 * DAY_MINUTES + m.minutesAgo }));
      const conv = await insertConversation(t.app, site, old);
      await settled(t, conv.id, 'not_eligible');
      expect(await labelHistory(t.app, conv.id)).toEqual([
        expect.objectContaining({ status: 'not_eligible', error: 'last activity is over 30 days old' }),
      ]);
    });

    it('a conversation whose last activity is 29 days old is still labeled', async () => {
      const conv = await insertConversation(
        t.app,
        site,
        chat.map((m) => ({ ...m, minutesAgo: 29 * DAY_MINUTES + m.minutesAgo })),
      );
      await settled(t, conv.id, 'labeled');
    });
  });

  describe('new activity after labeling returns the conversation to pending and it is labeled again', () => {
    it('keeps every record in history, with the newest one current', async () => {
      const conv = await insertConversation(t.app, site, chat);
      const first = await settled(t, conv.id);
      // What recording a new message does: move updatedAt and return to pending, in one transaction.
      await t.app.get(DataSource).transaction(async (manager) => {
        await manager.query(
          `INSERT INTO messages (id, conversation_id, position, role, created_at, blocks) VALUES ($1, $2, 3, 'shopper', now(), $3)`,
          [
            newId('msg'),
            conv.id,
            JSON.stringify([{ type: 'text', text: 'this is useless, I want a human' }]),
          ],
        );
        await manager.query(
          `UPDATE conversations SET updated_at = date_trunc('milliseconds', now()), message_count = 4 WHERE id = $1`,
          [conv.id],
        );
        await t.app.get(LabelWriter).returnToPending(conv.id, manager);
      });
      const second = await eventually(async () => {
        const state = await labelState(t.app, conv.id);
        return state.labelStatus === 'labeled' && state.currentLabelId !== first.currentLabelId
          ? state
          : undefined;
      }, 'labeled again');
      expect(second.tokens).toEqual(
        expect.arrayContaining(['human_requested:true', 'visitor_frustrated:true']),
      );
      const history = await labelHistory(t.app, conv.id);
      expect(history.map((r) => [r.id, r.status, r.isCurrent])).toEqual([
        [first.currentLabelId, 'labeled', false],
        [second.currentLabelId, 'labeled', true],
      ]);
    });
  });

  describe('idempotence: duplicate jobs label nothing twice into history', () => {
    it('the same (conversation, updatedAt) labeled by several jobs at once writes one record', async () => {
      const conv = await insertConversation(t.app, site, chat);
      const labeling = t.app.get(LabelingService);
      const results = await Promise.all([1, 2, 3, 4].map(() => labeling.label(conv.id, conv.updatedAt)));
      await settled(t, conv.id);
      // The scheduled workers ran too; whoever won, exactly one record exists.
      expect(results.filter((r) => r === 'labeled').length).toBeLessThanOrEqual(1);
      expect(results.filter((r) => r !== 'labeled').every((r) => r === 'skipped')).toBe(true);
      expect(await labelHistory(t.app, conv.id)).toHaveLength(1);
      expect(await labeling.label(conv.id, conv.updatedAt)).toBe('skipped');
      expect(await labelHistory(t.app, conv.id)).toHaveLength(1);
    });

    it('a job for an older updatedAt than the conversation now has writes nothing', async () => {
      const conv = await insertConversation(
        t.app,
        site,
        chat.map((m) => ({ ...m, minutesAgo: m.minutesAgo + 10 })),
      );
      const stale = new Date(conv.updatedAt.getTime() - 60_000);
      expect(await t.app.get(LabelingService).label(conv.id, stale)).toBe('skipped');
      await settled(t, conv.id);
      expect(await labelHistory(t.app, conv.id)).toHaveLength(1);
    });
  });
});

describe('labeling process: the scan enqueues only conversations quiet for LABEL_QUIET_MINUTES', () => {
  let t: TestApp;
  let site: LabelingApp['site'];
  labelingAppPerSuite({ LABEL_QUIET_MINUTES: '30' }, 'labeling-quiet:', (app) => ({ t, site } = app));

  it('labels a conversation quiet for 31 minutes and leaves one active a minute ago pending', async () => {
    const active = await insertConversation(t.app, site, chat);
    const quiet = await insertConversation(
      t.app,
      site,
      chat.map((m) => ({ ...m, minutesAgo: m.minutesAgo + 30 })),
    );
    await settled(t, quiet.id);
    // The scan that enqueued `quiet` saw `active` too (recorded first) and left it alone.
    expect((await labelState(t.app, active.id)).labelStatus).toBe('pending');
    expect(await labelHistory(t.app, active.id)).toEqual([]);
  });

  it('enqueues each due conversation once however often it scans (job ids deduplicate)', async () => {
    const queue = t.app.get<Queue>(getQueueToken(LABELING_QUEUE));
    await queue.pause(true);
    try {
      const due = await Promise.all(
        [1, 2, 3].map(() =>
          insertConversation(
            t.app,
            site,
            chat.map((m) => ({ ...m, minutesAgo: m.minutesAgo + 45 })),
          ),
        ),
      );
      const scanner = t.app.get(LabelScanService);
      await scanner.scan();
      await scanner.scan();
      const waiting = (await queue.getWaiting()).filter((job) => job.name === LABEL_JOB);
      expect(waiting.map((job) => job.id).sort()).toEqual(
        due.map((c) => labelJobId(c.id, c.updatedAt)).sort(),
      );
      expect(
        waiting.map((job) => job.data).sort((a, b) => a.conversationId.localeCompare(b.conversationId)),
      ).toEqual(
        due
          .map((c) => ({ conversationId: c.id, updatedAt: c.updatedAt.toISOString() }))
          .sort((a, b) => a.conversationId.localeCompare(b.conversationId)),
      );
    } finally {
      await queue.resume(true);
    }
  });

  describe('the label scan logs one info line per scan that found work (how many due, queued)', () => {
    it('one summary line for a scan that enqueued, none for a scan that found nothing', async () => {
      const queue = t.app.get<Queue>(getQueueToken(LABELING_QUEUE));
      const scanner = t.app.get(LabelScanService);
      await queue.pause(true);
      const info = jest.spyOn(Logger.prototype, 'log');
      try {
        const quiet = chat.map((m) => ({ ...m, minutesAgo: m.minutesAgo + 45 }));
        await insertConversation(t.app, site, quiet);
        await insertConversation(t.app, site, quiet);
        const scanLines = () =>
          info.mock.calls
            .map(([line]) => line as { msg?: string; due?: number; queued?: number | null })
            .filter((line) => typeof line?.msg === 'string' && line.msg.startsWith('label scan:'));

        const due = await scanner.scan();
        expect(due).toBeGreaterThanOrEqual(2);
        expect(scanLines()).toHaveLength(1);
        const [line] = scanLines();
        expect(line.due).toBe(due);
        expect(line.queued).toBeGreaterThanOrEqual(2);
        expect(line.msg).toBe(
          `label scan: ${due} conversations due, ${line.queued} jobs waiting in the labeling queue`,
        );

        // Nothing was quiet before 1970: no work, no line.
        expect(await scanner.scan(new Date(0))).toBe(0);
        expect(scanLines()).toHaveLength(1);
      } finally {
        info.mockRestore();
        await queue.resume(true);
      }
    });
  });

  it('reads due conversations in keyset batches of SCAN_BATCH_SIZE, skipping and repeating none (even with equal activity times)', async () => {
    const queue = t.app.get<Queue>(getQueueToken(LABELING_QUEUE));
    const dataSource = t.app.get(DataSource);
    await queue.pause(true);
    const total = SCAN_BATCH_SIZE * 2 + 7;
    const ids: string[] = Array.from({ length: total }, () => newId('conv'));
    try {
      await queue.empty();
      // All quiet since the same millisecond: only the id orders them.
      await dataSource.query(
        `INSERT INTO conversations (id, organization_id, site_id, title, channel, language, agent_id, agent_name, agent_version,
           agent_version_id, created_at, updated_at)
         SELECT id, $2, $3, 'Batch', 'web', 'en', 'agt_test', 'Test agent', 1, 'agtv_test', $4, $4 FROM unnest($1::text[]) AS id`,
        [ids, site.organizationId, site.id, new Date(Date.now() - 40 * 60_000)],
      );
      const enqueued = await t.app.get(LabelScanService).scan();
      const waiting = (await queue.getWaiting(0, total * 2))
        .filter((job) => job.name === LABEL_JOB)
        .map((job) => job.data.conversationId);
      expect(new Set(waiting).size).toBe(waiting.length);
      expect(waiting.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
      expect(enqueued).toBe(waiting.length);
    } finally {
      // Not labeled here: the rows go, and so do their jobs.
      await queue.empty();
      await dataSource.query(`DELETE FROM conversations WHERE id = ANY($1::text[])`, [ids]);
      await queue.resume(true);
    }
  });
});

describe('labeling process with the http judge (JUDGE=http)', () => {
  let t: TestApp;
  let site: LabelingApp['site'];
  let close: LabelingApp['close'];
  let judge: JudgeServer;
  /** Per conversation id: how the judge answers. */
  const behaviours = new Map<string, (res: import('node:http').ServerResponse) => void>();

  beforeAll(async () => {
    judge = await new JudgeServer().start();
    judge.behave = (req, res) => {
      const id = (req.body as { conversation?: { id?: string } }).conversation?.id ?? '';
      (behaviours.get(id) ?? ((r) => r.writeHead(500).end()))(res);
    };
    ({ t, site, close } = await startLabelingApp(
      {
        JUDGE: 'http',
        JUDGE_URL: judge.url,
        JUDGE_TIMEOUT_MS: '300',
        JUDGE_ATTEMPTS: '2',
        JUDGE_BACKOFF_MS: '10',
      },
      'labeling-http:',
    ));
  });
  afterAll(async () => {
    await close?.();
    await judge?.stop();
  });

  /** The judge's answer is chosen before the row exists, so the scan can never find it first. */
  async function conversationJudgedAs(behave: (res: import('node:http').ServerResponse) => void) {
    const id = newId('conv');
    behaviours.set(id, behave);
    return insertConversation(t.app, site, chat, { id });
  }

  it('a valid answer labels the conversation, keeping the judge model and version', async () => {
    const conv = await conversationJudgedAs((res) =>
      answerJson(res, 200, validJudgeAnswer({ resolution: 'partially_resolved', reviewReason: 'product' })),
    );
    const state = await settled(t, conv.id);
    expect(state.tokens).toEqual(
      expect.arrayContaining([
        'resolution:partially_resolved',
        'review_reason:product',
        'purchase_intent:true',
        'product_accuracy:fail',
      ]),
    );
    expect(state.tokens).not.toContain('policy_compliant:pass');
    expect(state.quality).toBe(0.8);
    const [record] = await t.app
      .get(DataSource)
      .query(
        `SELECT judge_kind, judge_model, judge_version, rationale FROM label_records WHERE conversation_id = $1`,
        [conv.id],
      );
    expect(record).toEqual({
      judge_kind: 'http',
      judge_model: 'judge-model-x',
      judge_version: '2026-11',
      rationale: 'The shopper found the product.',
    });
    const sent = judge.requests.find(
      (r) => (r.body as { conversation: { id: string } }).conversation.id === conv.id,
    )!;
    expect(sent.body).toMatchObject({
      taxonomyVersion: '1.1',
      conversation: { id: conv.id, channel: 'web' },
      messages: [{ role: 'shopper' }, { role: 'agent', rating: 'positive' }, { role: 'shopper' }],
    });
  });

  it('an invalid answer ends failed, with the error kept on the record', async () => {
    const conv = await conversationJudgedAs((res) =>
      answerJson(res, 200, validJudgeAnswer({ resolution: 'great' })),
    );
    const state = await settled(t, conv.id, 'failed');
    expect(state.tokens).toEqual([]);
    const [record] = await labelHistory(t.app, conv.id);
    expect(record).toMatchObject({ status: 'failed', isCurrent: true, judgeKind: 'http' });
    expect(record.error).toMatch(
      /^http judge failed after 2 attempts: invalid label: resolution must be one of/,
    );
  });

  it('a 500 answer on every attempt ends failed with the status kept', async () => {
    const conv = await conversationJudgedAs((res) => res.writeHead(500).end());
    await settled(t, conv.id, 'failed');
    expect((await labelHistory(t.app, conv.id))[0].error).toBe(
      'http judge failed after 2 attempts: answered HTTP 500',
    );
  });

  it('a judge too slow on every attempt ends failed with the timeout kept', async () => {
    const conv = await conversationJudgedAs(() => undefined);
    await settled(t, conv.id, 'failed');
    expect((await labelHistory(t.app, conv.id))[0].error).toBe(
      'http judge failed after 2 attempts: no complete answer within 300 ms',
    );
  });

  it('a conversation that changes while the judge thinks is not labeled from stale data, then labeled from the new state', async () => {
    let release!: () => void;
    const answered = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const conv = await conversationJudgedAs((res) => {
      calls += 1;
      if (calls === 1) {
        // Hold the first answer until the conversation has changed.
        void answered.then(() => answerJson(res, 200, validJudgeAnswer({ resolution: 'abandoned' })));
        return;
      }
      answerJson(res, 200, validJudgeAnswer({ resolution: 'resolved' }));
    });
    await eventually(async () => (calls >= 1 ? true : undefined), 'the judge is asked');
    await t.app.get(DataSource).transaction(async (manager) => {
      await manager.query(
        `UPDATE conversations SET updated_at = updated_at + interval '1 second' WHERE id = $1`,
        [conv.id],
      );
      await t.app.get(LabelWriter).returnToPending(conv.id, manager);
    });
    release();
    const state = await settled(t, conv.id);
    expect(state.tokens).toContain('resolution:resolved');
    expect((await labelHistory(t.app, conv.id)).map((r) => r.status)).toEqual(['labeled']);
  });
});
