/**
 * What the images run: the build (`scripts/build.js`, as the Dockerfile's build stage runs it)
 * emits JavaScript whose workspaces resolve to compiled code. The compiled tree is laid out as
 * the image lays it out (workspaces at libs/ and services/, linked from node_modules by
 * directory), with no TypeScript in it at all, and run by plain node, no tsx: every service's
 * workspace dependencies load, and the gateway starts, answers /healthz and /readyz against
 * the run's MongoDB and Redis, and stops cleanly on SIGTERM.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '@parametric/local-process';
import {
  eventually,
  testMongoUrl,
  testRedisUrl,
  uniqueDatabaseName,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import { repoRoot } from './support';

const SERVICES = readdirSync(path.join(repoRoot, 'services')).filter((name) =>
  existsSync(path.join(repoRoot, 'services', name, 'package.json')),
);

let work: string;
let app: string;

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesUnder(path.join(dir, entry.name)).map((f) => `${entry.name}/${f}`)
      : [entry.name],
  );
}

beforeAll(() => {
  // Under .tmp/, which jest's module map ignores; third-party packages resolve from the
  // repository's node_modules further up, as the image's /app/node_modules.
  mkdirSync(path.join(repoRoot, '.tmp'), { recursive: true });
  work = mkdtempSync(path.join(repoRoot, '.tmp', 'image-'));
  app = path.join(work, 'app');
  execFileSync(process.execPath, ['scripts/build.js', '--out-dir', app, '--no-check'], {
    cwd: repoRoot,
    stdio: 'pipe',
  });
  // npm links every workspace from node_modules by its package name; the image keeps those
  // links and lays the compiled workspaces over their directories.
  for (const dir of ['libs', 'services']) {
    for (const name of readdirSync(path.join(repoRoot, dir))) {
      const manifest = path.join(repoRoot, dir, name, 'package.json');
      if (!existsSync(manifest) || !existsSync(path.join(app, dir, name))) continue;
      const packageName = (JSON.parse(readFileSync(manifest, 'utf8')) as { name: string }).name;
      const link = path.join(app, 'node_modules', packageName);
      mkdirSync(path.dirname(link), { recursive: true });
      symlinkSync(path.relative(path.dirname(link), path.join(app, dir, name)), link);
    }
  }
}, 300_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the compiled tree holds JavaScript and manifests only (nothing that needs tsx)', () => {
  const files = filesUnder(app).filter((f) => !f.startsWith('node_modules/'));
  expect(files.filter((f) => !/\.js$|(^|\/)package\.json$/.test(f))).toEqual([]);
  for (const service of SERVICES) expect(files).toContain(`services/${service}/src/main.js`);
  // Tests and tools/ (the test harness, the simulators, the local servers) are not compiled.
  expect(files.filter((f) => /\.test\.js$|^tools\//.test(f))).toEqual([]);
});

test.each(SERVICES)(
  '%s: every workspace it depends on resolves to compiled JavaScript and loads',
  (service) => {
    const check = `
    const path = require('node:path');
    const deps = Object.keys(require('./services/${service}/package.json').dependencies || {});
    const loaded = [];
    for (const dep of deps) {
      const file = require.resolve(dep);
      if (file.includes(path.sep + 'node_modules' + path.sep)) continue; // a third-party package
      if (!file.startsWith(process.cwd() + path.sep) || !file.endsWith('.js'))
        throw new Error(dep + ' resolves to ' + file + ', not the compiled workspace');
      require(dep);
      loaded.push(dep);
    }
    console.log(JSON.stringify(loaded));`;
    const run = spawnSync(process.execPath, ['-e', check], { cwd: app, encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const manifest = JSON.parse(
      readFileSync(path.join(repoRoot, 'services', service, 'package.json'), 'utf8'),
    ) as {
      dependencies?: Record<string, string>;
    };
    const workspaceDeps = Object.keys(manifest.dependencies ?? {}).filter((dep) =>
      existsSync(path.join(app, 'node_modules', dep)),
    );
    expect(workspaceDeps.length).toBeGreaterThan(0);
    expect((JSON.parse(run.stdout) as string[]).sort()).toEqual(workspaceDeps.sort());
  },
);

test('the compiled gateway starts under plain node, answers /healthz and /readyz, and stops on SIGTERM', async () => {
  const [port, opsPort] = await Promise.all([freePort(), freePort()]);
  const child: ChildProcess = spawn(process.execPath, ['services/gateway/src/main.js'], {
    cwd: app,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: String(port),
      OPS_HOST: '127.0.0.1',
      OPS_PORT: String(opsPort),
      MONGO_URL: testMongoUrl(),
      MONGO_DB: uniqueDatabaseName('image_gateway'),
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: uniqueRedisPrefix(),
      OPS_TOKEN: randomBytes(24).toString('hex'),
      API_KEY_PEPPER: randomBytes(24).toString('hex'),
      INTERNAL_SIGNING_SECRET: randomBytes(24).toString('hex'),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exited = once(child, 'exit');
  try {
    await eventually(
      async () => {
        expect([child.exitCode, stderr]).toEqual([null, '']);
        expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      },
      { timeout: 30_000, message: 'the compiled gateway to be ready' },
    );
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
  }
  const [code, signal] = await exited;
  expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
}, 60_000);
