import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface, type Interface } from 'node:readline';
import { MPESA_SIMULATOR_BIN } from '../src';
import { basic, call } from './helpers';

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

/** The environment without any MPESA_SIMULATOR_* the developer may have set. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('MPESA_SIMULATOR_')),
  );
  return { ...env, ...extra };
}

function startCli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [MPESA_SIMULATOR_BIN, ...args], {
    env: cleanEnv(env),
  }) as ChildProcessWithoutNullStreams;
  const stderr: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  const lines = createInterface({ input: child.stdout });
  const all: string[] = [];
  lines.on('line', (line) => all.push(line));
  return { child, lines, all, stderr };
}

async function stop(child: ChildProcessWithoutNullStreams, signal: NodeJS.Signals) {
  const exited = once(child, 'exit');
  child.kill(signal);
  return (await exited) as [number | null, NodeJS.Signals | null];
}

describe('mpesa-simulator CLI', () => {
  let running: ChildProcessWithoutNullStreams | undefined;

  afterEach(async () => {
    if (running && running.exitCode === null && running.signalCode === null) await stop(running, 'SIGKILL');
    running = undefined;
  });

  it('--help prints the usage and the environment variables, and exits 0', () => {
    const out = spawnSync(process.execPath, [MPESA_SIMULATOR_BIN, '--help'], {
      encoding: 'utf8',
      env: cleanEnv(),
    });
    expect(out.status).toBe(0);
    expect(out.stdout).toContain('Usage: mpesa-simulator [--port N] [--host H] [options]');
    expect(out.stdout).toContain('$MPESA_SIMULATOR_CALLBACK_DELAY_MS');
    expect(out.stdout).toContain('$MPESA_SIMULATOR_MAX_RPS');
  });

  it.each([
    [['--frobnicate'], 'unknown option --frobnicate'],
    [['--port', 'eighty'], 'invalid --port eighty'],
    [['--max-rps', '0'], 'invalid --max-rps 0'],
    [['--timestamp-zone', 'WAT'], 'invalid --timestamp-zone WAT'],
  ])('rejects %j with exit code 2', (args, message) => {
    const out = spawnSync(process.execPath, [MPESA_SIMULATOR_BIN, ...args], {
      encoding: 'utf8',
      env: cleanEnv(),
    });
    expect(out.status).toBe(2);
    expect(out.stderr).toContain(message);
  });

  it('prints its URL (not its secrets), serves tokens, logs requests, and exits 0 on SIGTERM', async () => {
    const cli = startCli(['--port', '0', '--consumer-key', 'ck', '--consumer-secret', 'cs-hidden'], {
      MPESA_SIMULATOR_PASSKEY: 'pk-hidden',
      MPESA_SIMULATOR_SHORTCODE: '777888',
    });
    running = cli.child;
    const first = await nextLine(cli.lines);
    const url =
      /^mpesa-simulator listening on (http:\/\/127\.0\.0\.1:\d+) \(shortcode 777888, b2c shortcode 600000, consumer key ck\)$/.exec(
        first,
      )?.[1] as string;
    expect(url).toBeDefined();

    const logged = nextLine(cli.lines);
    const token = await call(url, 'GET', '/oauth/v1/generate?grant_type=client_credentials', {
      headers: { authorization: basic('ck', 'cs-hidden') },
    });
    expect(token.status).toBe(200);
    expect(await logged).toMatch(/^\S+ GET \/oauth\/v1\/generate 200$/);

    const [code, signal] = await stop(cli.child, 'SIGTERM');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(cli.all.join('\n')).not.toMatch(/cs-hidden|pk-hidden/);
    expect(cli.stderr.join('')).toBe('');
  });

  it('takes its settings from MPESA_SIMULATOR_* variables', async () => {
    const cli = startCli(['--port=0'], {
      MPESA_SIMULATOR_TOKEN_TTL_SECONDS: '60',
      MPESA_SIMULATOR_CONSUMER_KEY: 'k',
      MPESA_SIMULATOR_B2C_SHORTCODE: '600123',
    });
    running = cli.child;
    const first = await nextLine(cli.lines);
    expect(first).toContain('b2c shortcode 600123, consumer key k');
    const url = /listening on (\S+) /.exec(first)?.[1] as string;
    const token = await call(url, 'GET', '/oauth/v1/generate?grant_type=client_credentials', {
      headers: { authorization: basic('k', 'simulator-consumer-secret') },
    });
    expect(token.body.expires_in).toBe('59');
    const [code] = await stop(cli.child, 'SIGINT');
    expect(code).toBe(0);
  });
});
