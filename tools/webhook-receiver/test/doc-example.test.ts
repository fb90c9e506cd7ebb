import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { verifyWebhook } from '@parametric/sdk';
import { signWebhook } from '../src';
import { post, request, SECRET, signedDelivery, signedText } from './helpers';

/**
 * docs/webhooks.md shows partners a complete receiver. These tests run that very code block,
 * and hold its verification part to @parametric/sdk's verifyWebhook (which src/verify.ts calls)
 * case by case, so the docs cannot drift from the check the platform's own tools use.
 */
const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const DOC = readFileSync(path.join(REPO_ROOT, 'docs', 'webhooks.md'), 'utf8');

function typescriptBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```(?:ts|typescript)\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

type DocumentedVerify = (options: {
  rawBody: Buffer;
  headers: Record<string, string | string[] | undefined>;
  secret: string;
  now?: number;
}) => { ok: true; deliveryId: string } | { ok: false; reason: string };

/** The example's "Verification" part (up to "The receiver"), loaded as a module of its own. */
function documentedVerification(): {
  verifyWebhook: DocumentedVerify;
  signWebhook: (secret: string, timestamp: string | number, rawBody: Buffer | string) => string;
} {
  const block = typescriptBlocks(DOC)[0] ?? '';
  const end = block.indexOf('// ---- The receiver ----');
  expect(end).toBeGreaterThan(0);
  const verification = block.slice(0, end).replace("import { createServer } from 'node:http';\n", '');
  expect(verification).toContain('function verifyWebhook(');
  expect(verification).toContain('function signWebhook(');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'webhook-doc-verify-'));
  try {
    const file = path.join(dir, 'verification.ts');
    writeFileSync(file, `${verification}\nexport { signWebhook, verifyWebhook };\n`);
    return require(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('docs/webhooks.md receiver example', () => {
  it('has exactly one TypeScript block, importing only node:http and node:crypto', () => {
    const blocks = typescriptBlocks(DOC);
    expect(blocks).toHaveLength(1);
    const imports = [...(blocks[0] as string).matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
    expect(imports.sort()).toEqual(['node:crypto', 'node:http']);
    expect(blocks[0]).not.toMatch(/require\(/);
  });

  it('decides every case as @parametric/sdk verifyWebhook does (the check the receiver and partners use)', () => {
    const documented = documentedVerification();
    const now = Date.now();
    const good = signedDelivery({ now });
    const cases: Array<{ rawBody: Buffer; headers: Record<string, string | string[] | undefined> }> = [
      good,
      { ...good, rawBody: Buffer.concat([good.rawBody, Buffer.from(' ')]) },
      signedDelivery({ now, secret: `${SECRET}x` }),
      signedDelivery({ now: now - 301_000 }),
      signedDelivery({ now: now + 301_000 }),
      signedDelivery({ now: now - 300_000 }),
      signedText('not json', now),
      signedText('[1]', now),
      signedText('null', now),
      signedText('{"id":"d1"}', now),
      signedText('{"id":"other","event":"e"}', now),
      { ...good, headers: { ...good.headers, 'x-service-timestamp': '12e3' } },
      { ...good, headers: { ...good.headers, 'x-service-signature': undefined } },
      { ...good, headers: { ...good.headers, 'x-service-signature': '' } },
      { ...good, headers: { ...good.headers, 'x-service-delivery': [good.id, good.id] } },
      { ...good, headers: { ...good.headers, 'x-service-delivery': [good.id] } },
      { ...good, headers: { ...good.headers, 'x-service-delivery': 'someone-else' } },
      {
        ...good,
        headers: Object.fromEntries(Object.entries(good.headers).map(([k, v]) => [k.toUpperCase(), v])),
      },
    ];
    const verdicts = cases.map((c) => documented.verifyWebhook({ ...c, secret: SECRET, now }));
    // Every reason occurs, so agreeing is not agreeing on one answer.
    expect(new Set(verdicts.map((v) => (v.ok ? 'ok' : v.reason)))).toEqual(
      new Set([
        'ok',
        'missing-headers',
        'bad-timestamp',
        'stale-timestamp',
        'bad-signature',
        'bad-json',
        'id-mismatch',
      ]),
    );
    cases.forEach((c, i) => {
      expect([i, verdicts[i]]).toEqual([i, verifyWebhook(c.rawBody, c.headers, SECRET, { now })]);
    });
    expect(documented.signWebhook(SECRET, 1700000000, good.rawBody)).toBe(
      signWebhook(SECRET, 1700000000, good.rawBody),
    );
    expect(() => documented.verifyWebhook({ ...good, secret: '' })).toThrow(/secret is empty/);
  });

  it('type-checks on its own under strict settings (as a partner would paste it)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'webhook-doc-typecheck-'));
    try {
      const file = path.join(dir, 'receiver.ts');
      writeFileSync(file, typescriptBlocks(DOC)[0] ?? '');
      const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      const out = spawnSync(
        process.execPath,
        [
          tsc,
          '--ignoreConfig',
          '--noEmit',
          '--strict',
          '--noUncheckedIndexedAccess',
          '--exactOptionalPropertyTypes',
          '--target',
          'es2022',
          '--module',
          'nodenext',
          '--moduleResolution',
          'nodenext',
          '--types',
          'node',
          '--typeRoots',
          path.join(REPO_ROOT, 'node_modules', '@types'),
          file,
        ],
        { encoding: 'utf8' },
      );
      expect(`${out.stdout}${out.stderr}`).toBe('');
      expect(out.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('run as a program', () => {
    let dir: string;
    let child: ChildProcess;
    let output: string[];
    let url: string;

    beforeAll(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'webhook-doc-example-'));
      const file = path.join(dir, 'receiver.ts');
      writeFileSync(file, typescriptBlocks(DOC)[0] ?? '');
      child = spawn(process.execPath, ['--import', 'tsx', file], {
        cwd: REPO_ROOT, // where `tsx` resolves
        env: { ...process.env, PORT: '0', WEBHOOK_SECRET: SECRET },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      output = [];
      child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
      const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
      let port: string | undefined;
      for await (const line of lines) {
        output.push(`${line}\n`);
        port = /^listening on port (\d+)$/.exec(line)?.[1];
        if (port) break;
      }
      if (!port) throw new Error(`the example did not start:\n${output.join('')}`);
      child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
      url = `http://127.0.0.1:${port}/hooks`;
    });

    afterAll(async () => {
      if (child && child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    });

    it('answers 200 to a correctly signed delivery, and 200 marked duplicate to a copy of it', async () => {
      const delivery = signedDelivery({
        event: 'determination.delivered',
        data: { determinationId: 'det_1' },
      });
      const first = await post(url, delivery);
      expect(first.status).toBe(200);
      expect(JSON.parse(first.body)).toEqual({ received: true, duplicate: false });
      // The identical request again, and a retry signed later with the same body.id.
      const copy = await post(url, delivery);
      const retry = await post(url, signedDelivery({ id: delivery.id, now: Date.now() + 60_000 }));
      expect([copy.status, retry.status]).toEqual([200, 200]);
      expect(JSON.parse(copy.body)).toEqual({ received: true, duplicate: true });
      expect(JSON.parse(retry.body)).toEqual({ received: true, duplicate: true });
    });

    it('answers 4xx to a delivery tampered by one byte', async () => {
      const delivery = signedDelivery();
      const tampered = Buffer.from(delivery.rawBody);
      tampered[tampered.length - 3] = (tampered[tampered.length - 3] as number) ^ 1;
      const answer = await post(url, { ...delivery, rawBody: tampered });
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
    });

    it.each([
      ['signed 301 s ago', () => signedDelivery({ now: Date.now() - 301_000 })],
      ['signed 301 s ahead', () => signedDelivery({ now: Date.now() + 301_000 })],
      ['signed with another secret', () => signedDelivery({ secret: 'not-the-secret' })],
      [
        're-serialised with other whitespace',
        () => {
          const d = signedDelivery();
          return { ...d, rawBody: Buffer.from(JSON.stringify(JSON.parse(d.rawBody.toString()), null, 1)) };
        },
      ],
      [
        'with x-service-delivery not equal to body.id',
        () => {
          const d = signedDelivery();
          return { ...d, headers: { ...d.headers, 'x-service-delivery': 'someone-else' } };
        },
      ],
      [
        'without a signature',
        () => {
          const d = signedDelivery();
          const { 'x-service-signature': _dropped, ...headers } = d.headers;
          return { ...d, headers };
        },
      ],
      [
        'signed but not JSON',
        () => {
          const rawBody = Buffer.from('not json');
          const timestamp = String(Math.floor(Date.now() / 1000));
          return {
            rawBody,
            headers: {
              'x-service-delivery': 'x',
              'x-service-timestamp': timestamp,
              'x-service-signature': signWebhook(SECRET, timestamp, rawBody),
            },
          };
        },
      ],
    ])('answers 4xx to a delivery %s', async (_name, make) => {
      const answer = await post(url, make());
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
    });

    it('does not count a rejected copy as seen: the genuine delivery is then accepted as new', async () => {
      const delivery = signedDelivery();
      const stale = signedDelivery({ id: delivery.id, now: Date.now() - 600_000 });
      expect((await post(url, stale)).status).toBe(401);
      const answer = await post(url, delivery);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual({ received: true, duplicate: false });
    });

    it('answers 405 to anything but POST', async () => {
      expect((await request(url, { method: 'GET' })).status).toBe(405);
    });

    it('processed each accepted delivery once and never printed the secret', async () => {
      const delivery = signedDelivery({ event: 'kyb.verified' });
      await post(url, delivery);
      await post(url, delivery);
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
      const text = output.join('');
      expect(text.split(`processing kyb.verified ${delivery.id}`)).toHaveLength(2);
      expect(text).toContain('rejected a delivery: bad-signature');
      expect(text).not.toContain(SECRET);
    });
  });
});
