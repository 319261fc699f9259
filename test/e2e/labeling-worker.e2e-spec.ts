import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '../../src/config/config';
import { LabelScanService } from '../../src/labeling/label-scan.service';
import { LabelingProcessor } from '../../src/labeling/labeling.processor';
import { WorkerModule } from '../../src/worker.module';
import { insertConversation, labelHistory, labelState } from '../factories/conversation-rows';
import { createOrganization } from '../factories/organizations';
import { createIsolatedDatabase, eventually } from '../setup/isolated-database';
import { createTestApp, TestApp } from '../setup/test-app';
import { TEST_RUN_ENV } from '../setup/test-run';

describe('worker entry point: the same labeling modules, no HTTP, next to an HTTP process with WORKERS=off', () => {
  let http: TestApp;
  let worker: INestApplicationContext;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const db = await createIsolatedDatabase();
    drop = db.drop;
    const prefix = `${process.env[TEST_RUN_ENV.prefix]}labeling-worker:`;
    http = await createTestApp(
      { DATABASE_URL: db.url, WORKERS: 'off' },
      { redisKeyPrefixSuffix: 'labeling-worker:' },
    );
    const config = loadConfig({
      ...process.env,
      DATABASE_URL: db.url,
      REDIS_KEY_PREFIX: prefix,
      WORKERS: 'on',
      LABEL_QUIET_MINUTES: '0',
      LABEL_SCAN_INTERVAL_SECONDS: '1',
    });
    worker = await NestFactory.createApplicationContext(WorkerModule.register(config), { logger: false });
    await worker.init();
  });
  afterAll(async () => {
    await worker?.close();
    await http?.close();
    await drop?.();
  });

  it('with WORKERS=off the HTTP process registers no labeling processor or scan', () => {
    expect(() => http.app.get(LabelScanService, { strict: false })).toThrow();
    expect(() => http.app.get(LabelingProcessor, { strict: false })).toThrow();
    expect(worker.get(LabelScanService, { strict: false })).toBeInstanceOf(LabelScanService);
  });

  it('conversations in the shared database are labeled by the worker process', async () => {
    const org = await createOrganization(http.app);
    const conv = await insertConversation(
      http.app,
      { id: org.site.id, organizationId: org.organization.id },
      [
        { role: 'shopper', text: 'Do you ship to Belgium?', minutesAgo: 2 },
        { role: 'agent', text: 'Yes, in 3 days.', rating: 'positive', minutesAgo: 1 },
      ],
    );
    await eventually(
      async () => ((await labelState(http.app, conv.id)).labelStatus === 'labeled' ? true : undefined),
      'labeled by the worker',
    );
    expect(await labelHistory(http.app, conv.id)).toEqual([
      expect.objectContaining({ status: 'labeled', judgeKind: 'heuristic', isCurrent: true }),
    ]);
  });
});
