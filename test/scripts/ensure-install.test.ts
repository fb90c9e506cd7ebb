/**
 * scripts/ensure-install.js, the first step of `npm start` and `npm test`: it runs `npm ci` when
 * node_modules was installed from other manifests, and only then. A change that cannot alter
 * what an install puts in node_modules (a script added to package.json for a benchmark) must not
 * cost the next `npm start` a reinstall; a change that can (a dependency, the lockfile, a
 * workspace's dependencies, an install script) must. Run on a copy of the script in a scratch
 * repository whose `npm` is a stand-in that records being asked to install.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const SCRIPT = path.resolve(__dirname, '../../scripts/ensure-install.js');

let repo: string;
let bin: string;
const asked = () => path.join(repo, 'npm-was-asked');

const rootManifest = {
  name: 'scratch',
  version: '0.1.0',
  private: true,
  workspaces: ['libs/*'],
  scripts: { start: 'node start.js', postinstall: 'node scripts/ensure-install.js --postinstall' },
  devDependencies: { typescript: '7.0.0' },
};
const libManifest = { name: '@scratch/lib', version: '0.1.0', dependencies: { zod: '^4.0.0' } };

function write(file: string, value: unknown): void {
  mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
  writeFileSync(path.join(repo, file), typeof value === 'string' ? value : JSON.stringify(value, null, 2));
}

function edit(file: string, change: (manifest: Record<string, unknown>) => void): void {
  const manifest = JSON.parse(readFileSync(path.join(repo, file), 'utf8')) as Record<string, unknown>;
  change(manifest);
  write(file, manifest);
}

/** Runs the script as `npm start` does; answers whether it asked npm to install. */
function ensureInstall(): boolean {
  rmSync(asked(), { force: true });
  const run = spawnSync(process.execPath, [path.join(repo, 'scripts', 'ensure-install.js')], {
    cwd: repo,
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
    encoding: 'utf8',
  });
  expect(run.status).toBe(0);
  return existsSync(asked());
}

beforeEach(() => {
  repo = mkdtempSync(path.join(tmpdir(), 'ensure-install-'));
  bin = path.join(repo, 'bin');
  mkdirSync(bin);
  // The stand-in records its arguments and, as a finished install would, leaves node_modules.
  writeFileSync(
    path.join(bin, 'npm'),
    `#!/bin/sh\necho "$@" > "${asked()}"\nmkdir -p "${path.join(repo, 'node_modules')}"\n`,
  );
  chmodSync(path.join(bin, 'npm'), 0o755);
  mkdirSync(path.join(repo, 'scripts'));
  copyFileSync(SCRIPT, path.join(repo, 'scripts', 'ensure-install.js'));
  write('package.json', rootManifest);
  write('package-lock.json', { name: 'scratch', lockfileVersion: 3, packages: {} });
  write('libs/lib/package.json', libManifest);
  // An install done from these manifests.
  expect(ensureInstall()).toBe(true);
  expect(readFileSync(asked(), 'utf8').trim()).toBe('ci --no-audit --no-fund');
});

afterEach(() => rmSync(repo, { recursive: true, force: true }));

describe('ensure-install', () => {
  it('installs nothing when node_modules was installed from the manifests as they are', () => {
    expect(ensureInstall()).toBe(false);
  });

  it('installs nothing for a script, a description or a setting that an install does not read', () => {
    edit('package.json', (m) => {
      (m.scripts as Record<string, string>)['bench:new'] = 'node bench/new.ts';
      m.description = 'now described';
      m.engines = { node: '>=24' };
    });
    expect(ensureInstall()).toBe(false);
  });

  it('installs again for a dependency changed in the root or a workspace manifest', () => {
    edit('package.json', (m) => {
      m.devDependencies = { typescript: '7.0.1' };
    });
    expect(ensureInstall()).toBe(true);
    expect(ensureInstall()).toBe(false);
    edit('libs/lib/package.json', (m) => {
      m.dependencies = { zod: '^4.1.0' };
    });
    expect(ensureInstall()).toBe(true);
  });

  it('installs again for a changed lockfile, install script or new workspace', () => {
    write('package-lock.json', { name: 'scratch', lockfileVersion: 3, packages: { '': {} } });
    expect(ensureInstall()).toBe(true);
    edit('package.json', (m) => {
      (m.scripts as Record<string, string>).postinstall = 'node other.js';
    });
    expect(ensureInstall()).toBe(true);
    write('libs/other/package.json', { name: '@scratch/other', version: '0.1.0' });
    expect(ensureInstall()).toBe(true);
  });

  it('installs when node_modules holds no record of an install', () => {
    rmSync(path.join(repo, 'node_modules', '.install-stamp'));
    expect(ensureInstall()).toBe(true);
  });
});
