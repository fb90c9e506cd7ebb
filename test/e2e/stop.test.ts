import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { REPEAT_WINDOW_MS } from '@parametric/runtime';
import { eventually } from '@parametric/test-harness';
import { SERVICES, STAND_INS, STORES } from '@parametric/topology';
import {
  bootPlatform,
  type PortName,
  type ProcessInfo,
  platformEnv,
  processTree,
  type Running,
  stillRunning,
} from './support';

/**
 * Issue 23: stopping `npm start` is clean. Ctrl-C (SIGINT to the terminal's process group, which
 * holds npm and the launcher), SIGTERM to npm alone or to the launcher alone: every process of
 * the platform stops once, in order, exits 0 and prints one stop line, within 10 s, and nothing
 * listens on its ports any more. A second signal kills everything at once and says so. npm, the launcher or the
 * platform process killed outright leaves nothing running. Real processes, real signals, real
 * groups.
 */

jest.setTimeout(300_000);

/** How long a clean stop may take, end to end (the promise). */
const CLEAN_STOP_MS = 10_000;

/** The stop line's name of every process `npm start` runs: services, stand-ins, stores. */
const STOP_LABELS = [
  ...SERVICES.map((s) => s.name),
  ...STAND_INS.map((s) => s.name),
  ...STORES.map((s) => s.label),
];

interface Platform {
  running: Running;
  ports: Record<PortName, number>;
  /** Every process of the platform once it was up: the launcher (and npm) and all they started. */
  processes: ProcessInfo[];
}

const platforms: Platform[] = [];

/** `npm start` (or its script alone) on ports of its own, logging JSON at info, once it is up. */
async function boot(options: { npm?: boolean } = {}): Promise<Platform> {
  const { env, ports } = await platformEnv({ LOG_LEVEL: 'info', LOG_FORMAT: 'json' });
  // In a process group of its own, as a terminal's foreground job is.
  const running = await bootPlatform(env, { ...options, detached: true });
  const platform = { running, ports, processes: processTree(running.child.pid as number) };
  platforms.push(platform);
  return platform;
}

afterAll(() => {
  // Whatever a failed test left running.
  for (const { processes } of platforms) {
    for (const p of stillRunning(processes)) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {}
    }
  }
});

const exitOf = (platform: Platform) =>
  once(platform.running.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;

/**
 * Whether any socket still listens on the port (Linux: /proc/net/tcp and tcp6, state 0A): what a
 * stop owes. Not "can we bind it": once the platform has let a port go, another process's
 * socket may hold it, which is not the platform's doing (it happened once on CI).
 */
function listening(port: number): boolean {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return ['/proc/net/tcp', '/proc/net/tcp6'].some((table) =>
    readFileSync(table, 'utf8')
      .split('\n')
      .slice(1)
      .some((line) => {
        const [, local, , state] = line.trim().split(/\s+/);
        return local?.endsWith(hex) === true && state === '0A';
      }),
  );
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

/** Every process gone within `withinMs` of the stop request. */
async function allGone(platform: Platform, withinMs: number): Promise<void> {
  await eventually(async () => expect(stillRunning(platform.processes)).toEqual([]), {
    timeout: withinMs,
    interval: 100,
    message: 'every process of the platform gone',
  });
}

/** What a clean stop leaves: one clean stop line per process, one stop request per service, no listener left on its ports. */
async function expectCleanStop(platform: Platform): Promise<void> {
  await allGone(platform, CLEAN_STOP_MS);
  const output = platform.running.output();
  for (const label of STOP_LABELS)
    expect({ label, lines: count(output, `[start] ${label} stopped (`) }).toEqual({ label, lines: 1 });
  // `stopped: exit 1`, `did not stop within`, a forced exit: none of them.
  expect(output).not.toMatch(/\[start\] \S+ stopped: |did not stop|killing|second SIG|without waiting/i);
  for (const { name } of SERVICES) {
    const requests = output
      .split('\n')
      .filter((line) => line.includes(`"service":"${name}"`) && line.includes('"msg":"shutting down"'));
    expect({ name, requests: requests.length }).toEqual({ name, requests: 1 });
  }
  for (const [name, port] of Object.entries(platform.ports))
    expect({ name, listening: listening(port) }).toEqual({ name, listening: false });
}

describe('stopping npm start', () => {
  it('Ctrl-C (SIGINT to npm start’s process group): every process stops once, in order, exits 0', async () => {
    const platform = await boot({ npm: true });
    const exited = exitOf(platform);
    // The terminal signals npm and the launcher; npm forwards it to the launcher too.
    process.kill(-(platform.running.child.pid as number), 'SIGINT');
    const [code] = await exited;
    expect(code).toBe(0);
    await expectCleanStop(platform);
    // Services before what they call: the gateway first, policy after those calling it, the stores last.
    const output = platform.running.output();
    const at = (label: string) => output.indexOf(`[start] ${label} stopped (`);
    expect(at('gateway')).toBeLessThan(at('payments'));
    expect(at('payments')).toBeLessThan(at('determinations'));
    expect(at('determinations')).toBeLessThan(at('policy'));
    expect(at('payments')).toBeLessThan(at('mpesa-simulator'));
    for (const store of STORES) {
      for (const { name } of SERVICES) expect(at(name)).toBeLessThan(at(store.label));
    }
  });

  it('SIGTERM to npm alone: it forwards it, and the platform stops the same way', async () => {
    const platform = await boot({ npm: true });
    const exited = exitOf(platform);
    platform.running.child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
    await expectCleanStop(platform);
  });

  it('SIGTERM to the launcher alone (no npm): the same', async () => {
    const platform = await boot();
    const exited = exitOf(platform);
    platform.running.child.kill('SIGTERM');
    const [code] = await exited;
    expect(code).toBe(0);
    await expectCleanStop(platform);
  });

  it('a repeat within the window is the same request; a second signal after it kills everything at once', async () => {
    const platform = await boot();
    // A gateway that cannot stop (paused): the graceful stop waits for it, as for a stuck drain.
    const gateway = platform.processes.find((p) => p.command.includes('services/gateway/src/main.ts'));
    expect(gateway).toBeDefined();
    process.kill(gateway?.pid as number, 'SIGSTOP');
    const exited = exitOf(platform);
    const group = -(platform.running.child.pid as number);
    process.kill(group, 'SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 50));
    process.kill(group, 'SIGTERM');
    await eventually(async () => expect(platform.running.output()).toContain('[start] stopping…'), {
      timeout: 5_000,
      message: 'the graceful stop begun',
    });
    await new Promise((resolve) => setTimeout(resolve, REPEAT_WINDOW_MS + 500));
    // The repeat did not force: still stopping, waiting for the gateway.
    expect(platform.running.child.exitCode).toBeNull();
    expect(platform.running.output()).not.toContain('second SIGTERM');

    process.kill(group, 'SIGTERM');
    const [code] = await exited;
    expect(code).toBe(1);
    expect(platform.running.output()).toContain(
      '[start] second SIGTERM: killing every process of the platform without waiting (exit 1)',
    );
    // At once: nothing waits for a drain (the stores were never stopped gracefully).
    await allGone(platform, 5_000);
    expect(platform.running.output()).not.toMatch(/\[start\] (MongoDB|Redis|Chain) stopped/);
  });

  it('the launcher killed outright (SIGKILL): the platform notices and stops gracefully on its own', async () => {
    const platform = await boot();
    const exited = exitOf(platform);
    platform.running.child.kill('SIGKILL');
    await exited;
    await allGone(platform, CLEAN_STOP_MS);
    expect(platform.running.output()).toContain('[start] the launcher is gone: stopping…');
    await expectCleanStop(platform);
  });

  it('npm killed outright (SIGKILL): the launcher notices its parent gone and stops the platform the same way', async () => {
    const platform = await boot({ npm: true });
    const exited = exitOf(platform);
    platform.running.child.kill('SIGKILL');
    await exited;
    await expectCleanStop(platform);
  });

  it('the platform process killed outright (SIGKILL): its children stop on their own, the launcher says so', async () => {
    const platform = await boot();
    const launcher = platform.running.child.pid as number;
    // The launcher's one child node process leads the platform's process group.
    const platformProcess = platform.processes.find(
      (p) => p.ppid === launcher && p.command.includes('scripts/start.ts'),
    );
    expect(platformProcess).toBeDefined();
    const exited = exitOf(platform);
    process.kill(platformProcess?.pid as number, 'SIGKILL');
    const [code] = await exited;
    expect(code).not.toBe(0);
    expect(platform.running.output()).toContain('[start] the platform process ended by SIGKILL');
    // Services see their channel close, the stand-ins too, the stores' watchdogs see it gone;
    // the services may wait out their own deadline on a store already gone.
    await allGone(platform, 20_000);
    for (const [name, port] of Object.entries(platform.ports))
      expect({ name, listening: listening(port) }).toEqual({ name, listening: false });
  });
});
