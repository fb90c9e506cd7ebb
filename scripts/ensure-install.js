#!/usr/bin/env node
// Installs dependencies when node_modules is missing or older than the lockfile, so that
// `npm start` and `npm test` work on a fresh clone with no separate install step.
// Plain JavaScript on purpose: it runs before any dependency exists.
const { spawnSync } = require('node:child_process');
const { existsSync, statSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const lock = path.join(root, 'package-lock.json');
const installed = path.join(root, 'node_modules', '.package-lock.json');

function upToDate() {
  if (!existsSync(installed)) return false;
  return statSync(installed).mtimeMs >= statSync(lock).mtimeMs;
}

if (!upToDate()) {
  console.log('[setup] installing dependencies (npm ci)…');
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: root,
    stdio: 'inherit',
    // mongodb-memory-server's postinstall would try to download a mongod; we never need it to.
    env: { ...process.env, MONGOMS_DISABLE_POSTINSTALL: '1' },
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
