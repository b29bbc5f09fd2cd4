/**
 * Jest runs the TypeScript sources directly. Type checking is done once by `npm run typecheck`
 * (tsc), so ts-jest only transpiles, which keeps the suite fast on two cores.
 *
 * Every answer a test receives through supertest is checked against the OpenAPI document
 * (rest-compat/openapi.yaml): test/openapi/environment.ts compiles it once per worker and tallies
 * what was checked, test/openapi/setup.ts hooks supertest in each test file.
 */
module.exports = {
  testEnvironment: '<rootDir>/test/openapi/environment.ts',
  roots: ['<rootDir>'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  // Scratch and caches: bench/runtimes.ts keeps a baseline checkout with its own tests under .tmp.
  modulePathIgnorePatterns: ['<rootDir>/.tmp/', '<rootDir>/.cache/'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  globalSetup: '<rootDir>/test/openapi/global-setup.ts',
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/openapi/setup.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
};
