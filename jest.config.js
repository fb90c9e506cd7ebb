/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
    // jose ships ES modules only; Node 20 jest cannot require them untransformed.
    '/node_modules/jose/.+\\.js$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  testMatch: [
    '<rootDir>/libs/**/*.test.ts',
    '<rootDir>/services/**/*.test.ts',
    '<rootDir>/test/**/*.test.ts',
    '<rootDir>/tools/**/*.test.ts',
  ],
  // The fault suite kills and restarts service processes: its own run (npm run test:faults).
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/faults/'],
  modulePathIgnorePatterns: ['<rootDir>/.tmp/'],
  globalSetup: '<rootDir>/libs/test-harness/src/global-setup.ts',
  globalTeardown: '<rootDir>/libs/test-harness/src/global-teardown.ts',
  setupFilesAfterEnv: ['<rootDir>/libs/test-harness/src/setup-after-env.ts'],
  testTimeout: 30000,
  // Two cores: one worker per core keeps the embedded servers responsive.
  maxWorkers: 2,
};
