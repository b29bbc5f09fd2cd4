/**
 * Jest runs the TypeScript sources directly. Type checking is done once by `npm run typecheck`
 * (tsc), so ts-jest only transpiles, which keeps the suite fast on two cores.
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
};
