import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DETERMINATION_VERIFY_BIN } from '../src';
import { jwksOf, signedRecord, testKey, tier1Payload } from './helpers';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const API_KEY = 'pk_test_cli_6c1f0b7e9a2d4c3b8e5f';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI as a child process (async: the test's own HTTP server must keep answering). */
async function run(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; command?: string[] } = {},
): Promise<Run> {
  const [command, ...prefix] = options.command ?? [process.execPath, DETERMINATION_VERIFY_BIN];
  const child = spawn(command as string, [...prefix, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, PARTNER_API_KEY: '', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  child.stdin.end(options.input ?? '');
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

const key = testKey();
const jwks = jwksOf(key);
const record = signedRecord(tier1Payload(), key);
const response = { success: true, data: record };
const tampered = { success: true, data: { ...record, damagePercentBp: 10000 } };

let dir: string;
const file = (name: string) => path.join(dir, name);

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'determination-verify-cli-'));
  writeFileSync(file('record.json'), JSON.stringify(response, null, 2));
  writeFileSync(file('data.json'), JSON.stringify(record));
  writeFileSync(file('tampered.json'), JSON.stringify(tampered));
  writeFileSync(file('jwks.json'), JSON.stringify(jwks));
  writeFileSync(file('not-json.json'), '<html>nope</html>');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('determination-verify with files', () => {
  it('prints "valid: signed by <kid>" and exits 0, for the response or its data', async () => {
    for (const name of ['record.json', 'data.json']) {
      const out = await run([file(name), '--jwks', file('jwks.json')]);
      expect(out).toEqual({ code: 0, stdout: `valid: signed by ${key.kid}\n`, stderr: '' });
    }
  });

  it('prints "invalid: <reason>" and exits 1 for a tampered field', async () => {
    const out = await run([file('tampered.json'), `--jwks=${file('jwks.json')}`]);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe(
      'invalid: damagePercentBp differs from the signed payload: the record shows 10000, the signature covers 3333\n',
    );
  });

  it('--json prints the result object', async () => {
    const valid = await run([file('record.json'), '--jwks', file('jwks.json'), '--json']);
    expect(valid.code).toBe(0);
    expect(JSON.parse(valid.stdout)).toEqual({ valid: true, kid: key.kid, sandbox: false });
    const invalid = await run(['--json', file('tampered.json'), '--jwks', file('jwks.json')]);
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.stdout)).toMatchObject({ valid: false, code: 'FIELD_MISMATCH' });
  });

  it('refuses a sandbox test determination (exit 1) unless given --sandbox', async () => {
    const sandboxKey = testKey();
    writeFileSync(file('sandbox.json'), JSON.stringify(signedRecord(tier1Payload(), sandboxKey)));
    writeFileSync(
      file('sandbox-jwks.json'),
      JSON.stringify({ keys: [key.jwk, { ...sandboxKey.jwk, environment: 'sandbox' }] }),
    );
    const live = await run([file('sandbox.json'), '--jwks', file('sandbox-jwks.json'), '--json']);
    expect([live.code, JSON.parse(live.stdout).code]).toEqual([1, 'SANDBOX_KEY']);
    const test = await run([file('sandbox.json'), '--jwks', file('sandbox-jwks.json'), '--sandbox']);
    expect(test).toEqual({
      code: 0,
      stdout: `valid: signed by ${sandboxKey.kid} (a sandbox key: a test determination)\n`,
      stderr: '',
    });
  });

  it('exits 1 for a record whose key is not in the JWKS', async () => {
    writeFileSync(file('other-jwks.json'), JSON.stringify(jwksOf(testKey())));
    const out = await run([file('record.json'), '--jwks', file('other-jwks.json'), '--json']);
    expect(out.code).toBe(1);
    expect(JSON.parse(out.stdout)).toMatchObject({ valid: false, code: 'UNKNOWN_KID' });
  });

  it('reads the record from standard input with "-"', async () => {
    const out = await run(['-', '--jwks', file('jwks.json')], { input: JSON.stringify(response) });
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(`valid: signed by ${key.kid}\n`);
  });

  it('works as `npx determination-verify` from the repository root (the workspace bin link)', async () => {
    const out = await run([file('record.json'), '--jwks', file('jwks.json')], {
      command: ['npx', '--no-install', 'determination-verify'],
    });
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(`valid: signed by ${key.kid}\n`);
  });

  it('--help prints the usage and exits 0', async () => {
    const out = await run(['--help']);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('Usage: determination-verify <record file|url|-> --jwks <file|url>');
  });

  it.each([
    ['no arguments', [], 'which determination?'],
    ['no --jwks', ['record.json'], '--jwks is required'],
    ['--jwks without a value', ['record.json', '--jwks'], '--jwks needs a value'],
    ['two records', ['a.json', 'b.json', '--jwks', 'jwks.json'], 'one determination at a time'],
    ['an unknown option', ['record.json', '--jwks', 'jwks.json', '--verbose'], 'unknown option --verbose'],
    ['a bad timeout', ['record.json', '--jwks', 'jwks.json', '--timeout', 'soon'], 'invalid --timeout soon'],
    [
      'an API key on the command line',
      ['record.json', '--jwks', 'jwks.json', '--api-key', API_KEY],
      'read from the environment (PARTNER_API_KEY), never from the command line',
    ],
  ])('exits 2 with the usage for %s', async (_name, args, message) => {
    const out = await run(args);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain(message);
    expect(out.stderr).toContain('Usage:');
    expect(out.stderr).not.toContain(API_KEY);
  });

  it('exits 2 when a file is missing or not JSON', async () => {
    const missing = await run([file('nope.json'), '--jwks', file('jwks.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`cannot read record ${file('nope.json')}: ENOENT`);
    const notJson = await run([file('record.json'), '--jwks', file('not-json.json')]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain(`JWKS ${file('not-json.json')} is not JSON`);
  });
});

describe('determination-verify with URLs', () => {
  let server: http.Server;
  let base: string;
  const requests: Array<{ path: string; apiKey: string | undefined }> = [];
  const hanging = new Set<http.ServerResponse>();

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const apiKey = req.headers['x-api-key'] as string | undefined;
      requests.push({ path: req.url ?? '', apiKey });
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      switch (req.url) {
        case '/api/determinations/d1':
          if (apiKey !== API_KEY) {
            json(401, { success: false, error: { code: 'UNAUTHORIZED', message: 'Invalid API key' } });
          } else {
            json(200, response);
          }
          return;
        case '/api/determinations/tampered':
          json(200, tampered);
          return;
        case '/api/.well-known/jwks.json':
          json(200, jwks);
          return;
        case '/moved/record':
          res.writeHead(302, { location: '/api/determinations/tampered' });
          res.end();
          return;
        case '/moved/jwks':
          res.writeHead(301, { location: '/api/.well-known/jwks.json' });
          res.end();
          return;
        case '/hang':
          hanging.add(res);
          return;
        default:
          json(404, { success: false, error: { code: 'NOT_FOUND', message: 'no such thing' } });
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  beforeEach(() => {
    requests.length = 0;
  });

  it('fetches both, sending PARTNER_API_KEY with the record request only, and never prints it', async () => {
    const out = await run([`${base}/api/determinations/d1`, '--jwks', `${base}/api/.well-known/jwks.json`], {
      env: { PARTNER_API_KEY: API_KEY },
    });
    expect(out).toEqual({ code: 0, stdout: `valid: signed by ${key.kid}\n`, stderr: '' });
    expect(requests).toHaveLength(2);
    expect(requests.find((r) => r.path === '/api/determinations/d1')?.apiKey).toBe(API_KEY);
    expect(requests.find((r) => r.path === '/api/.well-known/jwks.json')?.apiKey).toBeUndefined();
  });

  it('mixes a file and a URL, and exits 1 for a tampered record fetched over HTTP', async () => {
    const out = await run([`${base}/api/determinations/tampered`, '--jwks', file('jwks.json')]);
    expect(out.code).toBe(1);
    expect(out.stdout).toContain('invalid: damagePercentBp differs');
  });

  it('exits 2 on an error answer, with the API error code and a hint when no key was set', async () => {
    const out = await run([`${base}/api/determinations/d1`, '--jwks', `${base}/api/.well-known/jwks.json`]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(
      `record ${base}/api/determinations/d1 answered 401 UNAUTHORIZED: Invalid API key`,
    );
    expect(out.stderr).toContain('set PARTNER_API_KEY');
    const missing = await run([file('record.json'), '--jwks', `${base}/nothing-here`]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('answered 404 NOT_FOUND');
  });

  it('does not follow a redirect with the API key attached (it would go along)', async () => {
    const out = await run([`${base}/moved/record`, '--jwks', file('jwks.json')], {
      env: { PARTNER_API_KEY: API_KEY },
    });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('redirects to /api/determinations/tampered; not following it');
    expect(requests.map((r) => r.path)).toEqual(['/moved/record']);
  });

  it('follows redirects without a key (the JWKS, or a public record copy)', async () => {
    const out = await run([`${base}/moved/record`, '--jwks', `${base}/moved/jwks`, '--json']);
    expect(out.code).toBe(1);
    expect(JSON.parse(out.stdout)).toMatchObject({ code: 'FIELD_MISMATCH' });
    expect(requests.map((r) => r.path).sort()).toEqual([
      '/api/.well-known/jwks.json',
      '/api/determinations/tampered',
      '/moved/jwks',
      '/moved/record',
    ]);
    expect(requests.every((r) => r.apiKey === undefined)).toBe(true);
  });

  it('gives up on a URL that does not answer within --timeout and exits 2', async () => {
    const out = await run([file('record.json'), '--jwks', `${base}/hang`, '--timeout', '0.3']);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`JWKS ${base}/hang did not answer within 0.3 s`);
  });

  it('exits 2 when nothing listens at the URL', async () => {
    const closed = http.createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    const out = await run([`http://127.0.0.1:${port}/api/determinations/d1`, '--jwks', file('jwks.json')]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('ECONNREFUSED');
  });
});
