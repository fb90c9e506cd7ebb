import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { eventually } from '@parametric/test-harness';
import { REPEAT_WINDOW_MS } from '../src';

const FIXTURE = path.join(__dirname, 'fixtures', 'service.ts');

function run(env: Record<string, string> = {}): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], { env: { ...process.env, ...env } });
  let out = '';
  child.stdout?.on('data', (c) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c) => {
    out += c.toString();
  });
  return { child, output: () => out };
}

/** Resolves once the fixture has printed `marker`; fails with its output so far. */
function printed(output: () => string, marker: string): Promise<void> {
  return eventually(() => expect(output()).toContain(marker));
}

describe('runService', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'on %s stops the service, waits for it, and exits 0',
    async (signal) => {
      const { child, output } = run();
      await printed(output, 'started');
      const exited = once(child, 'exit');
      child.kill(signal);
      const [code] = await exited;
      expect(code).toBe(0);
      expect(output()).toContain('stopped');
    },
  );

  it('exits 1 with the config error when the configuration is invalid, starting nothing', async () => {
    const { child, output } = run({ FAIL_CONFIG: '1' });
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(output()).toContain('PORT: must be a number');
    expect(output()).not.toContain('started');
  });

  it('exits 1 when shutdown fails', async () => {
    const { child, output } = run({ FAIL_STOP: '1' });
    await printed(output, 'started');
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(1);
  });

  it('exits 1 with a log line when a stop hangs past the deadline', async () => {
    const { child, output } = run({ HANG_STOP: '1', DEADLINE_MS: '300', LOG_LEVEL: 'error' });
    await printed(output, 'started');
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(1);
    expect(output()).toContain('graceful shutdown did not finish within the deadline');
    expect(output()).not.toContain('stopped');
  });

  it('exits at once on a second signal while stopping', async () => {
    const { child, output } = run({ HANG_STOP: '1', DEADLINE_MS: '60000', LOG_LEVEL: 'error' });
    await printed(output, 'started');
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    // Past the window in which a repeat is the same signal delivered twice (src/process.ts).
    await new Promise((r) => setTimeout(r, REPEAT_WINDOW_MS + 200));
    child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(1);
    expect(output()).toContain('second SIGTERM while stopping');
  });
});
