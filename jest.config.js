/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Type checking is `npm run typecheck`; jest only transpiles, file by file.
  transform: { '^.+\\.ts$': 'ts-jest' },
  testTimeout: 30000,
};
