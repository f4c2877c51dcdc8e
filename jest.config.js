/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Type checking is `npm run typecheck`; jest only transpiles, file by file.
  transform: { '^.+\\.ts$': 'ts-jest' },
  // One PostgreSQL and one migrated template database per run; each test file clones it.
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30000,
};
