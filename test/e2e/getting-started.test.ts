import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { bootPlatform, platformEnv, type Running, root } from './support';

/**
 * docs/getting-started.md runs: its `sh` blocks, in order and in one shell, against `npm start`'s
 * platform as a newcomer starts it (issue 27). A block that breaks (a renamed field, a refused
 * request: every curl is `-f`) fails the page's promise, and this test with it.
 */
jest.setTimeout(300_000);

const PAGE = path.join(root, 'docs', 'getting-started.md');

/** The page's `sh` blocks, in order. */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

let platform: Running;
let baseUrl: string;
let receiverUrl: string;

beforeAll(async () => {
  const started = await platformEnv();
  baseUrl = `http://127.0.0.1:${started.ports.GATEWAY_PORT}/api`;
  receiverUrl = `http://127.0.0.1:${started.ports.WEBHOOK_RECEIVER_PORT}`;
  platform = await bootPlatform(started.env);
});

afterAll(async () => {
  if (platform && platform.child.exitCode === null && platform.child.signalCode === null) {
    const exited = once(platform.child, 'exit');
    platform.child.kill('SIGTERM');
    await exited;
  }
});

it('has the journey in sh blocks', () => {
  expect(shellBlocks(readFileSync(PAGE, 'utf8')).length).toBeGreaterThanOrEqual(8);
});

it('runs every sh block of docs/getting-started.md, in order, to a verified sandbox determination and its report', () => {
  const script = ['set -euo pipefail', ...shellBlocks(readFileSync(PAGE, 'utf8'))].join('\n');
  const run = spawnSync('bash', ['-c', script], {
    cwd: root,
    env: { ...process.env, BASE_URL: baseUrl, RECEIVER_URL: receiverUrl },
    encoding: 'utf8',
    timeout: 240_000,
  });
  const said = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
  expect({ status: run.status, said }).toEqual({ status: 0, said: expect.any(String) });
  const lines = run.stdout.trim().split('\n');
  expect(lines).toEqual([
    'pik_sandbox_',
    'sandbox',
    expect.stringMatching(/^\d+(\.\d{2})$/),
    'ACTIVE',
    '20000.00',
    expect.stringMatching(/^valid: signed by \S+ \(a sandbox key: a test determination\)$/),
    'determination.delivered received, signature verified',
    'REPORTED',
  ]);
});
