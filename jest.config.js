/** One command runs every suite: unit specs beside the code and e2e suites under test/. */
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
  testMatch: [
    '<rootDir>/src/**/*.spec.ts',
    '<rootDir>/bench/**/*.spec.ts',
    '<rootDir>/test/**/*.e2e-spec.ts',
  ],
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  setupFiles: ['<rootDir>/test/setup/env.ts'],
  testTimeout: 30000,
  // Three suites at once on the CI's two cores: an e2e suite spends most of its time waiting (on
  // PostgreSQL, OpenSearch, the processes it starts, its timers), two left a core idle.
  maxWorkers: 3,
  testSequencer: '<rootDir>/test/setup/longest-first-sequencer.js',
  reporters: ['default', '<rootDir>/test/setup/summary-reporter.js'],
};
