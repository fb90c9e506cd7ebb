import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPublicClient, http } from 'viem';
import { startLocalChain } from '../src';

/** `npm start --data-dir`'s chain: its blocks and the registry survive a restart. */
describe('a private anvil with a state directory', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'local-chain-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reuses the registry it deployed and keeps the chain, instead of deploying again', async () => {
    const stateDir = path.join(dir, 'chain');
    const first = await startLocalChain({}, { stateDir });
    let firstBlock: bigint;
    try {
      expect(first.description).toContain('(deployed; state in');
      firstBlock = await createPublicClient({ transport: http(first.rpcUrl) }).getBlockNumber();
      expect(firstBlock).toBeGreaterThan(0n);
    } finally {
      await first.stop();
    }
    expect(existsSync(path.join(stateDir, 'state.json'))).toBe(true);

    const second = await startLocalChain({}, { stateDir });
    try {
      expect(second.registryAddress).toBe(first.registryAddress);
      expect(second.description).toContain('(kept; state in');
      const client = createPublicClient({ transport: http(second.rpcUrl) });
      expect(await client.getBlockNumber()).toBeGreaterThanOrEqual(firstBlock);
      expect(await client.getCode({ address: second.registryAddress })).toMatch(/^0x[0-9a-f]{10,}/);
    } finally {
      await second.stop();
    }
  });

  it('deploys again when the recorded registry is not on the kept chain', async () => {
    const stateDir = path.join(dir, 'lost');
    const first = await startLocalChain({}, { stateDir });
    await first.stop();
    // The state lost (deleted, or never dumped before a kill), the record left behind.
    rmSync(path.join(stateDir, 'state.json'));
    const second = await startLocalChain({}, { stateDir });
    try {
      expect(second.description).toContain('(deployed; state in');
      const code = await createPublicClient({ transport: http(second.rpcUrl) }).getCode({
        address: second.registryAddress,
      });
      expect(code).toMatch(/^0x[0-9a-f]{10,}/);
    } finally {
      await second.stop();
    }
  });
});
