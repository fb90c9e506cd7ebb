import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { eventually } from '@parametric/test-harness';
import { bootPlatform, platformEnv } from './support';

/**
 * Issue 15: `npm start` on a terminal shows one readable line per log line (LOG_FORMAT=pretty,
 * the default on a TTY, forced here since the test's output is a pipe), a request as
 * `gateway GET /api/… 200 3 ms`, and no line per health probe at `info`.
 */
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
    const { env, ports } = await platformEnv({ LOG_FORMAT: 'pretty', LOG_LEVEL: 'info' });
    const running = await bootPlatform(env);
    child = running.child;
    const output = () => running.output();
    const res = await fetch(`http://127.0.0.1:${ports.GATEWAY_PORT}/api/organizations/me`);
    expect(res.status).toBe(401);
    await eventually(
      () => expect(output()).toMatch(/WARN.*gateway GET \/api\/organizations\/me 401 \d+ ms/),
      {
        timeout: 10_000,
        message: 'the request line (a 4xx logs at warn)',
      },
    );
    const logLines = output()
      .split('\n')
      .filter((line) => /\] (INFO|WARN|ERROR|DEBUG)/.test(line));
    expect(logLines.length).toBeGreaterThan(0);
    // No JSON log line got through unformatted, and the readiness probes npm start made are not lines.
    expect(
      output()
        .split('\n')
        .filter((line) => line.startsWith('{"level"')),
    ).toEqual([]);
    expect(logLines.filter((line) => /\/(readyz|healthz)/.test(line))).toEqual([]);
  });
});
