import { expect } from '@jest/globals';
import { runCli } from '../../src/cli/run-cli';
import { TEST_RUN_ENV } from './test-run';

/** Runs one admin command in-process on this run's database; returns its exit code and output. */
export async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
    // This run's Redis prefix, as the test apps have: a revocation reaches them through it.
    env: {
      ...process.env,
      DATABASE_URL: process.env[TEST_RUN_ENV.database],
      REDIS_KEY_PREFIX: process.env[TEST_RUN_ENV.prefix],
      LOG_LEVEL: 'silent',
    },
  });
  return { code, stdout, stderr };
}

/** Runs one admin command that must succeed (exit code 0) and print JSON; returns that JSON. */
export async function cliJson(...args: string[]) {
  const out = await cli(...args);
  expect(out.code).toBe(0);
  return JSON.parse(out.stdout);
}
