/**
 * `npm run test:faults`: real service processes killed and restarted mid-flow (test/faults), on the
 * platform project's servers and set-up (jest.config.js). Kept out of the platform project's run;
 * `npm test` runs it last.
 */
const { projects, ...base } = require('./jest.config');

const platform = projects.find((project) => project.displayName === 'platform');

module.exports = {
  ...base,
  ...platform,
  displayName: 'faults',
  testMatch: ['<rootDir>/test/faults/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  maxWorkers: 1,
};
