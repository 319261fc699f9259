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
