import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { eventually } from '@parametric/test-harness';
import { REPEAT_WINDOW_MS, stopRequests } from '../src';

const FIXTURE = path.join(__dirname, 'fixtures', 'draining-service.ts');

describe('stopRequests', () => {
  function recorder() {
    let clock = 0;
    const calls: string[] = [];
    const request = stopRequests(
      { stop: (reason) => calls.push(`stop ${reason}`), force: (reason) => calls.push(`force ${reason}`) },
      { now: () => clock },
    );
    return { calls, request, advance: (ms: number) => (clock += ms) };
  }

  it('stops on the first request and ignores the same request delivered again within the window', () => {
    const { calls, request, advance } = recorder();
    request('SIGINT');
    advance(20);
    request('SIGINT');
    advance(REPEAT_WINDOW_MS - 20);
    request('SIGTERM');
    expect(calls).toEqual(['stop SIGINT']);
  });

  it('forces on a signal past the window, once', () => {
    const { calls, request, advance } = recorder();
    request('SIGTERM');
    advance(REPEAT_WINDOW_MS + 1);
    request('SIGINT');
    request('SIGTERM');
    expect(calls).toEqual(['stop SIGTERM', 'force SIGINT']);
  });

  it('stops when the parent is gone, and never forces for it', () => {
    const { calls, request, advance } = recorder();
    request('parent gone');
    advance(REPEAT_WINDOW_MS * 5);
    request('parent gone');
    expect(calls).toEqual(['stop parent gone']);
    const second = recorder();
    second.request('SIGTERM');
    second.advance(REPEAT_WINDOW_MS * 5);
    second.request('parent gone');
    expect(second.calls).toEqual(['stop SIGTERM']);
  });
});

/** The fixture service, with an IPC channel as `npm start` gives it; its output and exit. */
function run(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  child.stdout?.on('data', (c) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c) => {
    out += c.toString();
  });
  return { child, output: () => out };
}

const started = (output: () => string) => eventually(() => expect(output()).toContain('started'));
const shuttingDown = (output: () => string) =>
  output()
    .split('\n')
    .filter((line) => line.includes('shutting down'));

describe('runService stop requests', () => {
  it('drains once and exits 0 when the same signal arrives twice at once (a terminal and npm)', async () => {
    const { child, output } = run({ STOP_MS: '400' });
    await started(output);
    const exited = once(child, 'exit');
    child.kill('SIGINT');
    child.kill('SIGINT');
    const [code] = await exited;
    expect(code).toBe(0);
    expect(output()).toContain('stopped');
    expect(output()).not.toContain('second SIGINT');
    expect(shuttingDown(output)).toHaveLength(1);
  });

  it('stops gracefully and exits 0 when its launcher is gone (the IPC channel closes)', async () => {
    const { child, output } = run({ STOP_MS: '50' });
    await started(output);
    const exited = once(child, 'exit');
    // What the child sees of a launcher killed outright: its end of the channel closes.
    child.disconnect();
    const [code] = await exited;
    expect(code).toBe(0);
    expect(output()).toContain('stopped');
    expect(shuttingDown(output)).toEqual([expect.stringContaining('"reason":"parent gone"')]);
  });

  it('forces (exit 1, said so) on a signal after the window while draining', async () => {
    const { child, output } = run({ STOP_MS: '60000' });
    await started(output);
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, REPEAT_WINDOW_MS + 200));
    child.kill('SIGINT');
    const [code] = await exited;
    expect(code).toBe(1);
    expect(output()).toContain('second SIGINT while stopping: exiting without waiting');
    expect(output()).not.toContain('stopped\n');
  });
});

describe('watchParentPid', () => {
  it('asks to stop when the parent is killed outright (the process is handed to another parent)', async () => {
    const fixture = path.join(__dirname, 'fixtures', 'watch-parent.ts');
    // A shell as the parent, as npm is the launcher's: killed, it cannot pass anything on.
    const shell = spawn('sh', ['-c', `"${process.execPath}" --import tsx "${fixture}" & wait`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    shell.stdout?.on('data', (c) => {
      out += c.toString();
    });
    await eventually(() => expect(out).toMatch(/started \d+/));
    const shellGone = once(shell, 'exit');
    shell.kill('SIGKILL');
    await shellGone;
    // The fixture still writes to the pipe the shell left it.
    await eventually(() => expect(out).toContain('stop parent gone'), { timeout: 5_000 });
  });
});
