// The order jest starts the suites in: the longest first, so that the run does not end with one
// worker finishing a long suite while the other has nothing left to do.
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS module, as jest loads it */
const { relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * The suites that run longest on the CI machines (2 cores, about 20 s and more each), longest
 * first: they lead every run, whatever jest has recorded (a fresh clone has no durations, and a
 * developer's cache holds those of the few files last run). The other suites follow as jest
 * orders them: those without a recorded duration, then the longest recorded, then the largest.
 */
const LONGEST = [
  'test/e2e/process-signals.e2e-spec.ts',
  'test/e2e/opensearch-cluster.e2e-spec.ts',
  'test/e2e/search-parity.e2e-spec.ts',
  'test/e2e/search-mirror.e2e-spec.ts',
  'test/e2e/page-import-large.e2e-spec.ts',
  'test/e2e/http-processes.e2e-spec.ts',
  'test/e2e/labeling-process.e2e-spec.ts',
  'test/e2e/hostile-database.e2e-spec.ts',
  'test/e2e/alerts.e2e-spec.ts',
  'test/e2e/conversation-listing.e2e-spec.ts',
  'test/e2e/fuzz-routes.e2e-spec.ts',
  'test/e2e/conversation-deletion.e2e-spec.ts',
  'test/e2e/label-reviews.e2e-spec.ts',
  'test/e2e/tracing.e2e-spec.ts',
  'test/e2e/process-logging.e2e-spec.ts',
  'test/e2e/export-recovery.e2e-spec.ts',
  'test/e2e/webhook-recovery.e2e-spec.ts',
  'test/e2e/labeling-resilience.e2e-spec.ts',
  'test/e2e/boot.e2e-spec.ts',
  'bench/lib/bare-listing.spec.ts',
];

class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    const size = (test) => test.context.hasteFS.getSize(test.path) ?? 0;
    const listed = (test) => {
      const at = LONGEST.indexOf(relative(test.context.config.rootDir, test.path));
      return at < 0 ? LONGEST.length : at;
    };
    const unknown = (test) => this.time(test) === undefined;
    return [...tests].sort((a, b) => {
      if (this.hasFailed(a) !== this.hasFailed(b)) return this.hasFailed(a) ? -1 : 1;
      if (listed(a) !== listed(b)) return listed(a) - listed(b);
      if (unknown(a) !== unknown(b)) return unknown(a) ? -1 : 1;
      return (this.time(b) ?? 0) - (this.time(a) ?? 0) || size(b) - size(a);
    });
  }
}

module.exports = LongestFirstSequencer;
