/**
 * `npm run test:faults`: real service processes killed and restarted mid-flow (test/faults). Kept
 * out of `npm test`'s run by the main config; CI runs both.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/faults/**/*.test.ts'],
  testPathIgnorePatterns: [],
  maxWorkers: 1,
};
