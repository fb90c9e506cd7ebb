import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface, type Interface } from 'node:readline';
import { WEBHOOK_RECEIVER_BIN } from '../src';
import { post, request, SECRET, signedDelivery } from './helpers';

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

function startCli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [WEBHOOK_RECEIVER_BIN, ...args], {
    env: { ...process.env, WEBHOOK_SECRET: '', ...env },
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

describe('webhook-receiver CLI', () => {
  let running: ChildProcessWithoutNullStreams | undefined;

  afterEach(async () => {
    if (running && running.exitCode === null && running.signalCode === null) await stop(running, 'SIGKILL');
    running = undefined;
  });

  it('--help prints the usage and exits 0', () => {
    const out = spawnSync(process.execPath, [WEBHOOK_RECEIVER_BIN, '--help'], { encoding: 'utf8' });
    expect(out.status).toBe(0);
    expect(out.stdout).toContain('Usage: webhook-receiver [--port N] [--host H] [--secret S]');
  });

  it('rejects an unknown option with exit code 2', () => {
    const out = spawnSync(process.execPath, [WEBHOOK_RECEIVER_BIN, '--frobnicate'], { encoding: 'utf8' });
    expect(out.status).toBe(2);
    expect(out.stderr).toContain('unknown option --frobnicate');
  });

  it('prints its URL, logs each delivery without the secret, and exits 0 on SIGTERM', async () => {
    const cli = startCli(['--port', '0', '--host', '127.0.0.1', '--secret', SECRET]);
    running = cli.child;
    const first = await nextLine(cli.lines);
    const url = /^webhook-receiver listening on (http:\/\/127\.0\.0\.1:\d+\/hooks) \(secret set\)$/.exec(
      first,
    )?.[1];
    expect(url).toBeDefined();

    const good = signedDelivery({ event: 'payout.completed' });
    const logged = nextLine(cli.lines);
    expect((await post(url as string, good)).status).toBe(200);
    expect(await logged).toMatch(new RegExp(`^\\S+ payout\\.completed ${good.id} verified$`));

    const again = nextLine(cli.lines);
    expect((await post(url as string, good)).status).toBe(200);
    expect(await again).toMatch(new RegExp(`^\\S+ payout\\.completed ${good.id} verified duplicate$`));

    const forged = signedDelivery({ event: 'kyb.verified', secret: 'guess' });
    const rejected = nextLine(cli.lines);
    expect((await post(url as string, forged)).status).toBe(401);
    expect(await rejected).toMatch(new RegExp(`^\\S+ kyb\\.verified ${forged.id} rejected bad-signature$`));

    const [code, signal] = await stop(cli.child, 'SIGTERM');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(cli.all).toHaveLength(4);
    expect(cli.all.join('\n')).not.toContain(SECRET);
    expect(cli.stderr.join('')).toBe('');
  });

  it('takes the secret from PUT /_secret, logs that it changed (not its value), and exits 0 on SIGINT', async () => {
    const cli = startCli(['--port=0']);
    running = cli.child;
    const first = await nextLine(cli.lines);
    const url = /listening on (\S+) \(no secret yet: PUT \/_secret to set it\)$/.exec(first)?.[1] as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks$/);

    const unverified = nextLine(cli.lines);
    expect((await post(url, signedDelivery({ secret: 'pasted' }))).status).toBe(401);
    expect(await unverified).toMatch(/ rejected no-secret$/);

    const changed = nextLine(cli.lines);
    const put = await request(url.replace(/\/hooks$/, '/_secret'), {
      method: 'PUT',
      body: JSON.stringify({ secret: 'pasted' }),
    });
    expect(put.status).toBe(200);
    expect(await changed).toMatch(/ secret set$/);

    const verified = nextLine(cli.lines);
    expect((await post(url, signedDelivery({ secret: 'pasted' }))).status).toBe(200);
    expect(await verified).toMatch(/ verified$/);

    const [code] = await stop(cli.child, 'SIGINT');
    expect(code).toBe(0);
    expect(cli.all.join('\n')).not.toContain('pasted');
  });

  it('reads the secret from WEBHOOK_SECRET when --secret is not given', async () => {
    const cli = startCli(['--port', '0'], { WEBHOOK_SECRET: SECRET });
    running = cli.child;
    const first = await nextLine(cli.lines);
    expect(first).toMatch(/\(secret set\)$/);
    const url = /listening on (\S+) /.exec(first)?.[1] as string;
    const logged = nextLine(cli.lines);
    expect((await post(url, signedDelivery())).status).toBe(200);
    expect(await logged).toMatch(/ verified$/);
    const [code] = await stop(cli.child, 'SIGTERM');
    expect(code).toBe(0);
  });
});
