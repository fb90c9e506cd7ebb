import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { freePort } from '@parametric/local-process';
import { eventually } from '@parametric/test-harness';

/**
 * Issue 15: `npm start` on a terminal shows one readable line per log line (LOG_FORMAT=pretty,
 * the default on a TTY, forced here since the test's output is a pipe), a request as
 * `gateway GET /api/… 200 3 ms`, and no line per health probe at `info`.
 */
const root = path.resolve(__dirname, '..', '..');
jest.setTimeout(200_000);

describe('npm start with LOG_FORMAT=pretty', () => {
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('prints readable request lines, not JSON, and no health probe lines', async () => {
    const names = [
      'GATEWAY_PORT',
      'OPS_PORT',
      'WEBHOOKS_PORT',
      'POLICY_PORT',
      'DETERMINATIONS_PORT',
      'PAYMENTS_PORT',
      'PAYMENTS_CALLBACK_PORT',
      'WEBHOOK_RECEIVER_PORT',
      'RATE_SIMULATOR_PORT',
      'MPESA_SIMULATOR_PORT',
    ];
    const ports = Object.fromEntries(
      await Promise.all(names.map(async (n) => [n, await freePort()] as const)),
    );
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_FORMAT: 'pretty', LOG_LEVEL: 'info' };
    for (const name of [
      'MONGO_URL',
      'REDIS_URL',
      'CHAIN_RPC_URL',
      'CHAIN_REGISTRY_ADDRESS',
      'CHAIN_PRIVATE_KEY',
    ]) {
      delete env[name];
    }
    for (const [name, port] of Object.entries(ports)) env[name] = String(port);
    child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const running = child;
    await eventually(
      async () => {
        if (running.exitCode !== null) throw new Error(`npm start exited:\n${output}`);
        expect(output).toContain('Press Ctrl-C to stop.');
      },
      { timeout: 150_000, interval: 250, message: 'the npm start banner' },
    );
    const res = await fetch(`http://127.0.0.1:${ports.GATEWAY_PORT}/api/organizations/me`);
    expect(res.status).toBe(401);
    await eventually(() => expect(output).toMatch(/WARN.*gateway GET \/api\/organizations\/me 401 \d+ ms/), {
      timeout: 10_000,
      message: 'the request line (a 4xx logs at warn)',
    });
    const logLines = output.split('\n').filter((line) => /\] (INFO|WARN|ERROR|DEBUG)/.test(line));
    expect(logLines.length).toBeGreaterThan(0);
    // No JSON log line got through unformatted, and the readiness probes npm start made are not lines.
    expect(output.split('\n').filter((line) => line.startsWith('{"level"'))).toEqual([]);
    expect(logLines.filter((line) => /\/(readyz|healthz)/.test(line))).toEqual([]);
  });
});
