/**
 * jest `setupFiles` of the `unit` project: marks the file as a unit test and forgets any server the
 * platform project's globalSetup published (both projects may run in one jest process), so that
 * `testMongoUrl()`, `testRedisUrl()` and `testChain()` fail with the reason (./servers.ts).
 */
process.env.TEST_PROJECT = 'unit';
for (const variable of Object.keys(process.env)) {
  if (/^TEST_(MONGO|REDIS|CHAIN)_/.test(variable)) delete process.env[variable];
}
