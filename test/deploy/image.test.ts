/**
 * What the images run: the build (`scripts/build.js`, as the Dockerfile's build stage runs it)
 * emits JavaScript whose workspaces resolve to compiled code. The compiled tree is laid out as
 * the image lays it out (workspaces at libs/ and services/, linked from node_modules by
 * directory), with no TypeScript in it at all, and run by plain node, no tsx: every service's
 * workspace dependencies load, and the gateway starts, answers /healthz and /readyz against
 * the run's MongoDB and Redis, and stops cleanly on SIGTERM. The same holds with only the
 * packages scripts/prune-service-deps.js keeps for a service (the Dockerfile's `service-deps`),
 * laid out outside the repository so that nothing else can resolve.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
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

const { pruneInstall, serviceClosure } = require('../../scripts/prune-service-deps.js') as {
  serviceClosure(packages: Record<string, unknown>, service: string): Set<string>;
  pruneInstall(app: string, service: string): { keep: Set<string>; removed: number };
};

// A service is a process with a main; services/dashboard holds the partner dashboard's static
// files, which the gateway serves (docs/dashboard.md), not a process of its own.
const SERVICES = readdirSync(path.join(repoRoot, 'services')).filter((name) =>
  existsSync(path.join(repoRoot, 'services', name, 'src', 'main.ts')),
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

/** Starts the compiled gateway in `cwd`; it must answer /readyz and /healthz, then stop on SIGTERM. */
async function startsAndStops(cwd: string): Promise<void> {
  const [port, opsPort] = await Promise.all([freePort(), freePort()]);
  const child: ChildProcess = spawn(process.execPath, ['services/gateway/src/main.js'], {
    cwd,
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
}

test('the compiled gateway starts under plain node, answers /healthz and /readyz, and stops on SIGTERM', async () => {
  await startsAndStops(app);
}, 60_000);

/**
 * The compiled tree with only what prune-service-deps keeps for `service`, in the OS temp
 * directory (no node_modules further up): each kept package copied from the repository's
 * install (the lockfile fixes where each one lies, dev dependencies or not), then pruned.
 */
function prunedTree(service: string): string {
  const lock = JSON.parse(readFileSync(path.join(repoRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { link?: boolean; resolved?: string }>;
  };
  const pruned = path.join(mkdtempSync(path.join(tmpdir(), `image-${service}-`)), 'app');
  cpSync(app, pruned, { recursive: true, filter: (src) => !src.startsWith(path.join(app, 'node_modules')) });
  cpSync(path.join(repoRoot, 'package-lock.json'), path.join(pruned, 'package-lock.json'));
  for (const location of serviceClosure(lock.packages, service)) {
    const entry = lock.packages[location];
    if (!location.startsWith('node_modules/') || location.includes('/node_modules/', 1)) continue;
    const target = path.join(pruned, location);
    mkdirSync(path.dirname(target), { recursive: true });
    if (entry?.link && entry.resolved)
      symlinkSync(path.relative(path.dirname(target), path.join(pruned, entry.resolved)), target);
    // Another platform's optional binary (fsevents, @esbuild/darwin-arm64) is in the lockfile only.
    else if (existsSync(path.join(repoRoot, location)))
      cpSync(path.join(repoRoot, location), target, { recursive: true });
  }
  pruneInstall(pruned, service);
  return pruned;
}

describe('an image pruned to one service (scripts/prune-service-deps.js)', () => {
  const trees: string[] = [];
  afterAll(() => {
    for (const tree of trees) rmSync(path.dirname(tree), { recursive: true, force: true });
  });

  test('leaves out the packages only other services use', () => {
    const lock = JSON.parse(readFileSync(path.join(repoRoot, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, unknown>;
    };
    const gateway = serviceClosure(lock.packages, 'gateway');
    const policy = serviceClosure(lock.packages, 'policy');
    // viem (the chain client) is policy's through libs/chain; swagger-ui-dist is the gateway's.
    expect(policy.has('node_modules/viem')).toBe(true);
    expect(policy.has('libs/chain')).toBe(true);
    expect(policy.has('node_modules/swagger-ui-dist')).toBe(false);
    expect(gateway.has('node_modules/viem')).toBe(false);
    expect(gateway.has('libs/chain')).toBe(false);
    expect(gateway.has('node_modules/swagger-ui-dist')).toBe(true);
    // No dev dependency of the repository (the compiler, jest) and no tool.
    for (const closure of [gateway, policy]) {
      expect(closure.has('node_modules/jest')).toBe(false);
      expect(closure.has('node_modules/typescript')).toBe(false);
      expect([...closure].filter((l) => l.startsWith('tools/'))).toEqual([]);
    }
  });

  test('policy: every dependency of the service loads from the pruned tree', () => {
    const tree = prunedTree('policy');
    trees.push(tree);
    // The gateway's (its API docs page), not policy's.
    expect(existsSync(path.join(tree, 'node_modules', 'swagger-ui-dist'))).toBe(false);
    expect(existsSync(path.join(tree, 'node_modules', 'viem'))).toBe(true);
    const check = `
    const deps = Object.keys(require('./services/policy/package.json').dependencies || {});
    for (const dep of deps) require(dep);
    console.log(deps.length);`;
    const run = spawnSync(process.execPath, ['-e', check], { cwd: tree, encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(Number(run.stdout)).toBeGreaterThan(10);
  }, 120_000);

  test('gateway: starts from the pruned tree, answers /healthz and /readyz, and stops on SIGTERM', async () => {
    const tree = prunedTree('gateway');
    trees.push(tree);
    expect(existsSync(path.join(tree, 'node_modules', 'viem'))).toBe(false);
    await startsAndStops(tree);
  }, 120_000);
});
