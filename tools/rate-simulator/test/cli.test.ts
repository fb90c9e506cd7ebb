import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface, type Interface } from 'node:readline';
import { RATE_SIMULATOR_BIN } from '../src';
import { ratesUrl, request } from './helpers';

/** The next stdout line of the CLI (an event-driven read: no polling). */
function nextLine(lines: Interface): Promise<string> {
  return new Promise((resolve, reject) => {
    const onLine = (line: string) => {
      lines.off('close', onClose);
      resolve(line);
    };
    const onClose = () => {
      lines.off('line', onLine);
      reject(new Error('the CLI closed its output'));
    };
    lines.once('line', onLine);
    lines.once('close', onClose);
  });
}

const cleanEnv = (env: NodeJS.ProcessEnv = {}) => {
  const { RATE_SIMULATOR_KES_PER_USDC: _ignored, ...rest } = process.env;
  return { ...rest, ...env };
};

function startCli(args: string[], env?: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [RATE_SIMULATOR_BIN, ...args], {
    env: cleanEnv(env),
  }) as ChildProcessWithoutNullStreams;
  const stderr: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  const lines = createInterface({ input: child.stdout });
  return { child, lines, stderr };
}

async function stop(child: ChildProcessWithoutNullStreams, signal: NodeJS.Signals) {
  const exited = once(child, 'exit');
  child.kill(signal);
  return (await exited) as [number | null, NodeJS.Signals | null];
}

const run = (args: string[], env?: NodeJS.ProcessEnv) =>
  spawnSync(process.execPath, [RATE_SIMULATOR_BIN, ...args], { encoding: 'utf8', env: cleanEnv(env) });

describe('rate-simulator CLI', () => {
  let running: ChildProcessWithoutNullStreams | undefined;

  afterEach(async () => {
    if (running && running.exitCode === null && running.signalCode === null) await stop(running, 'SIGKILL');
    running = undefined;
  });

  it('--help prints the usage and exits 0', () => {
    const out = run(['--help']);
    expect(out.status).toBe(0);
    expect(out.stdout).toContain('Usage: rate-simulator [--port N] [--host H] [--kes-per-usdc R]');
  });

  it('refuses an unknown option, and a rate that is not a positive decimal, with exit code 2', () => {
    expect(run(['--frobnicate']).status).toBe(2);
    for (const rate of ['0', '0.00', '-1', '1e3', 'abc']) {
      const out = run(['--kes-per-usdc', rate]);
      expect(out.status).toBe(2);
      expect(out.stderr).toContain('--kes-per-usdc must be a positive decimal');
    }
    const env = run([], { RATE_SIMULATOR_KES_PER_USDC: 'zero' });
    expect(env.status).toBe(2);
    expect(env.stderr).toContain('RATE_SIMULATOR_KES_PER_USDC must be a positive decimal');
  });

  it('serves --kes-per-usdc, logs control changes, and exits 0 on SIGTERM', async () => {
    const cli = startCli(['--port', '0', '--kes-per-usdc=131.25']);
    running = cli.child;
    const first = await nextLine(cli.lines);
    const url = /^rate-simulator listening on (http:\/\/127\.0\.0\.1:\d+) \(131\.25 KES per USDC/.exec(
      first,
    )?.[1];
    expect(url).toBeDefined();
    const answer = await request(ratesUrl(url as string));
    expect(JSON.parse(answer.body).data.rates.KES).toBe('131.25');

    const logged = nextLine(cli.lines);
    await request(`${url}/_rate`, { method: 'PUT', body: { kesPerUsdc: '132' } });
    expect(await logged).toMatch(/^\S+ rate set: 132 KES per USDC$/);
    const behaviour = nextLine(cli.lines);
    await request(`${url}/_behaviour`, { method: 'PUT', body: { mode: 'down' } });
    expect(await behaviour).toMatch(/^\S+ behaviour set: down$/);

    const [code, signal] = await stop(cli.child, 'SIGTERM');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(cli.stderr.join('')).toBe('');
  });

  it('takes the rate from RATE_SIMULATOR_KES_PER_USDC, and exits 0 on SIGINT', async () => {
    const cli = startCli(['--port', '0'], { RATE_SIMULATOR_KES_PER_USDC: '127.5' });
    running = cli.child;
    const first = await nextLine(cli.lines);
    const url = /listening on (\S+) /.exec(first)?.[1] as string;
    expect(JSON.parse((await request(ratesUrl(url))).body).data.rates.KES).toBe('127.5');
    const [code] = await stop(cli.child, 'SIGINT');
    expect(code).toBe(0);
  });
});
