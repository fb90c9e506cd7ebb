/**
 * The environment variable through which the jest globalSetup publishes one of the run's servers
 * (MongoDB, Redis, the chain) to test files. A file in the `unit` project gets a clear error
 * instead: that project starts no servers (README, "Tests"), so a unit test that reaches for one is
 * misclassified and must fail at once, not wait for a connection that never comes.
 */
export function publishedServer(variable: string, server: string): string {
  if (process.env.TEST_PROJECT === 'unit') {
    throw new Error(
      `this test file runs in the jest "unit" project, which starts no servers, yet it asked for ${server}: ` +
        'test the rule against an in-memory store, or move the file out of the unit folders ' +
        '(jest.config.js, README "Tests") so it runs in the "platform" project',
    );
  }
  const value = process.env[variable];
  if (!value) {
    throw new Error(
      `${variable} is not set: run tests through jest so the harness globalSetup starts ${server}`,
    );
  }
  return value;
}
