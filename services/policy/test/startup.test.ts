import { localDevPrivateKey } from '@parametric/chain';
import { createLogger } from '@parametric/logger';
import { captureLogs, eventually } from '@parametric/test-harness';
import { startPolicy } from '../src/service';
import { policyTestConfig } from './support';

function capturedLogger() {
  const logs = captureLogs();
  return {
    logger: createLogger({ name: 'policy-startup', level: 'info', destination: logs.destination }),
    logs,
  };
}

function logLineOf(logs: ReturnType<typeof captureLogs>, msg: RegExp) {
  return eventually(
    () => {
      const found = logs.records().find((l) => msg.test(String(l.msg)));
      if (!found) throw new Error(`logged so far: ${JSON.stringify(logs.records().map((l) => l.msg))}`);
      return found;
    },
    { message: `a log line matching ${msg}` },
  );
}

describe('policy service start-up', () => {
  it('says at once when CHAIN_REGISTRY_ADDRESS holds no registry it can use, and still serves', async () => {
    const { config } = await policyTestConfig({
      CHAIN_REGISTRY_ADDRESS: '0x00000000000000000000000000000000000000aa',
    });
    const { logger, logs } = capturedLogger();
    const policy = await startPolicy(config, logger);
    try {
      const line = await logLineOf(logs, /holds no PolicyRegistry/);
      expect(line).toMatchObject({ level: 50, found: 'no-contract' });
      expect((await fetch(`${policy.url}/readyz`)).status).toBe(200);
    } finally {
      await policy.stop();
    }
  });

  it('names a registry owned by another account, and logs nothing of the kind for a usable one', async () => {
    const usable = await policyTestConfig();
    // Any dev account but the one that deployed this file's registries.
    const otherKey = [8, 9]
      .map((i) => localDevPrivateKey(i))
      .find((k) => k !== usable.chain.privateKey) as string;
    const foreign = await policyTestConfig({ CHAIN_PRIVATE_KEY: otherKey });
    const a = capturedLogger();
    const b = capturedLogger();
    const [withForeignKey, withOwnKey] = await Promise.all([
      startPolicy(foreign.config, a.logger),
      startPolicy(usable.config, b.logger),
    ]);
    try {
      expect(await logLineOf(a.logs, /holds no PolicyRegistry/)).toMatchObject({ found: 'other-owner' });
      await withOwnKey.stop(); // waits for its start-up check
      expect(
        b.logs.records().filter((l) => /PolicyRegistry|chain not reachable/.test(String(l.msg))),
      ).toEqual([]);
      expect(a.logs.text() + b.logs.text()).not.toContain(foreign.config.CHAIN_PRIVATE_KEY.slice(2));
    } finally {
      await withForeignKey.stop();
      await withOwnKey.stop();
    }
  });
});
