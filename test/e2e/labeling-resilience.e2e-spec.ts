import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getQueueToken } from '@nestjs/bull';
import Bull, { Queue } from 'bull';
import { newId } from '../../src/common/ids/ids';
import { LabelScanService } from '../../src/labeling/label-scan.service';
import { LABEL_JOB, LABELING_QUEUE, labelJobId } from '../../src/labeling/labeling-queue';
import { LabelingService } from '../../src/labeling/labeling.service';
import { insertConversation, labelHistory, labelState, RowMessage } from '../factories/conversation-rows';
import { TcpProxy } from '../fixtures/tcp-proxy';
import { eventually } from '../setup/isolated-database';
import { LabelingApp, labelingAppPerSuite, startLabelingApp } from '../setup/labeling-app';
import { TestApp } from '../setup/test-app';

const chat: RowMessage[] = [
  { role: 'shopper', text: 'Is this jacket waterproof?', minutesAgo: 2 },
  { role: 'agent', text: 'Yes, rated 10,000 mm.', minutesAgo: 1 },
];
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

async function labeled(t: TestApp, conversationId: string, timeoutMs?: number) {
  return eventually(
    async () => ((await labelState(t.app, conversationId)).labelStatus === 'labeled' ? true : undefined),
    `${conversationId} labeled`,
    timeoutMs,
  );
}

describe('resilience: Redis briefly down delays labels but drops none', () => {
  let t: TestApp;
  let site: LabelingApp['site'];
  let close: LabelingApp['close'];
  let proxy: TcpProxy;

  beforeAll(async () => {
    proxy = await TcpProxy.forUrl(REDIS_URL).start();
    ({ t, site, close } = await startLabelingApp(
      { REDIS_URL: proxy.urlFor(REDIS_URL) },
      'labeling-redis-down:',
    ));
  });
  afterAll(async () => {
    await close?.();
    await proxy?.stop();
  });

  it('conversations that go quiet while Redis is unreachable are labeled once it is back', async () => {
    const before = await insertConversation(t.app, site, chat);
    await labeled(t, before.id);

    await proxy.cut();
    // The app really lost Redis: its readiness check says so.
    await eventually(
      async () => ((await t.http().get('/health/ready')).status === 503 ? true : undefined),
      'Redis reported down',
    );
    const during = await Promise.all([1, 2, 3].map(() => insertConversation(t.app, site, chat)));
    // Due at once (LABEL_QUIET_MINUTES=0), but no scan or label job can run without Redis.
    for (const c of during) expect((await labelState(t.app, c.id)).labelStatus).toBe('pending');
    await proxy.restore();

    for (const c of during) await labeled(t, c.id, 30_000);
    for (const c of during) expect(await labelHistory(t.app, c.id)).toHaveLength(1);
  });

  it('label jobs lost with Redis data are enqueued again by the next scan from Postgres', async () => {
    const queue = t.app.get<Queue>(getQueueToken(LABELING_QUEUE));
    await queue.pause(true);
    const lost = await Promise.all([1, 2].map(() => insertConversation(t.app, site, chat)));
    try {
      await t.app.get(LabelScanService).scan();
      expect((await queue.getWaiting()).filter((j) => j.name === LABEL_JOB)).toHaveLength(2);
      await queue.empty(); // the waiting jobs are gone, as after a Redis restart without persistence
      expect((await queue.getWaiting()).filter((j) => j.name === LABEL_JOB)).toHaveLength(0);
    } finally {
      await queue.resume(true);
    }
    for (const c of lost) await labeled(t, c.id);
  });
});

describe('resilience: a worker killed mid-batch loses nothing and labels nothing twice into history', () => {
  let t: TestApp;
  let site: LabelingApp['site'];
  labelingAppPerSuite(
    { LABEL_JOB_LOCK_SECONDS: '1' },
    'labeling-killed-worker:',
    (app) => ({ t, site } = app),
  );

  it('jobs a dead worker held are taken over; one it had already written is not written again', async () => {
    const queue = t.app.get<Queue>(getQueueToken(LABELING_QUEUE));
    await queue.pause(true);
    // Another worker process on the same queue, which dies holding two jobs.
    const doomed = new Bull(LABELING_QUEUE, {
      redis: REDIS_URL,
      prefix: `${t.config.redisKeyPrefix}bull`,
      settings: { lockDuration: 1000 },
    });
    const ids = [newId('conv'), newId('conv')];
    try {
      const convs = await Promise.all(ids.map((id) => insertConversation(t.app, site, chat, { id })));
      await t.app.get(LabelScanService).scan();
      const held: string[] = [];
      for (let i = 0; i < 10 && held.length < 2; i++) {
        const job = await doomed.getNextJob(); // scan jobs it takes die with it too
        if (job?.name === LABEL_JOB) held.push(String(job.id));
      }
      expect(held.sort()).toEqual(convs.map((c) => labelJobId(c.id, c.updatedAt)).sort());
      // It wrote the first label, then died before acknowledging either job.
      expect(await t.app.get(LabelingService).label(convs[0].id, convs[0].updatedAt)).toBe('labeled');
      doomed.clients.forEach((client) => client.disconnect());
    } finally {
      await queue.resume(true);
    }
    for (const id of ids) await labeled(t, id);
    for (const id of ids) expect(await labelHistory(t.app, id)).toHaveLength(1);
    await doomed.close().catch(() => undefined);
  });
});
