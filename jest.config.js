/**
 * What both projects share: jest only transpiles, file by file, with esbuild (type checking is
 * `npm run typecheck`).
 */
const project = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  transform: { '^.+\\.ts$': '<rootDir>/test/support/esbuild-transform.js' },
  // Both projects in one runner, in two lanes side by side (test/support/lanes-runner.js):
  // jest would run the files of one runner after the other's.
  runner: '<rootDir>/test/support/lanes-runner.js',
  // Libraries that every file loads (stripe, lodash, ajv, the OpenAPI validator…) loaded once per
  // worker, not once per file: test/support/shared-modules-runtime.js says which, and why only those.
  runtime: '<rootDir>/test/support/shared-modules-runtime.js',
};

/** @type {import('jest').Config} */
module.exports = {
  // Once per `jest` run, for both projects: one PostgreSQL and one migrated template database;
  // each test file clones the template, so files run in parallel without touching each other.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // A safety net against a hang, not a measure: with a file on each core, set-ups (a database
  // cloned, an app started) on a busy machine passed 30 s.
  testTimeout: 60000,
  // Both cores (jest's default leaves one to itself): a file spends much of its time waiting
  // on PostgreSQL, and each has its own database.
  maxWorkers: '100%',
  // A worker whose heap passed 1 GB after a file is replaced before its next one. Each file
  // loads the server afresh into the same worker; without this, a worker that had run many
  // files was still exiting when jest's 500 ms ran out ("A worker process has failed to exit
  // gracefully", 3 runs of 3), though no handle is left open (--detectOpenHandles finds none);
  // with it, 0 of 2. (With a limit, jest runs even a single file in a worker.)
  workerIdleMemoryLimit: '1GB',
  projects: [
    {
      ...project,
      displayName: 'in-process',
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/operate/'],
    },
    {
      ...project,
      // Real server processes, as `npm start` runs them: one file at a time, in a lane of
      // their own beside the in-process files.
      displayName: 'operate',
      testMatch: ['<rootDir>/test/operate/**/*.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/operate-timeout.ts'],
    },
  ],
};
