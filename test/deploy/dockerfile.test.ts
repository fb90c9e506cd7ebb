/**
 * The Dockerfile (read as the builder reads it: continuations joined, comments dropped)
 * builds any service as a non-root Node.js 24 image whose command runs the compiled
 * services/${SERVICE}/src/main.js with node itself as the process that receives SIGTERM (no
 * tsx); .dockerignore keeps the context lean without dropping anything the image needs. That
 * the compiled tree resolves and runs is test/deploy/image.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SERVICE_NODE_FLAGS } from '@parametric/topology';
import { DASHBOARD_BUILD_DIR } from '../../services/gateway/src/dashboard/static';
import { lineageIn, parseDockerfile, type Stage } from './dockerfile';
import { at, readListedResources, readRepoFile, repoRoot } from './support';

const stages = parseDockerfile(readRepoFile('Dockerfile'));
const buildConfig = JSON.parse(readRepoFile('tsconfig.build.json')) as {
  extends?: string;
  compilerOptions?: { noEmit?: boolean; rootDir?: string; outDir?: string; types?: string[] };
  include?: string[];
  exclude?: string[];
};
const finalStage = stages.at(-1) as Stage;

/** A stage and the stages it is built FROM, outermost last. */
function lineage(stage: Stage): Stage[] {
  return lineageIn(stages, stage);
}

function instructionsOf(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}

/** ENV of a stage, including what it inherits (both `K=V K2=V2` and legacy `K V` forms). */
function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const s of lineage(stage).reverse()) {
    for (const args of instructionsOf(s, 'ENV')) {
      if (!args.includes('=')) {
        const [key = '', ...rest] = args.split(/\s+/);
        env[key] = rest.join(' ');
        continue;
      }
      for (const match of args.matchAll(/(\w+)=("([^"]*)"|\S*)/g))
        env[match[1] as string] = match[3] ?? match[2] ?? '';
    }
  }
  return env;
}

/** The exec-form JSON array of CMD/ENTRYPOINT/HEALTHCHECK CMD, or undefined for shell form. */
function execForm(args: string): string[] | undefined {
  try {
    const parsed: unknown = JSON.parse(args);
    return Array.isArray(parsed) && parsed.every((a) => typeof a === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

describe('Dockerfile', () => {
  test('is multi-stage, every stage on node:24-bookworm-slim (directly or through another stage)', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    // Pinned by digest: test/deploy/image-config.test.ts.
    for (const stage of stages)
      expect(lineage(stage).at(-1)?.from).toMatch(/^node:24-bookworm-slim@sha256:[0-9a-f]{64}$/);
  });

  test('installs production dependencies with npm ci (the committed lockfile, never npm install) before copying sources', () => {
    const installs = stages.flatMap((stage) =>
      stage.instructions.map((i, index) => ({ stage, index, args: i.args, keyword: i.keyword })),
    );
    const install = installs.find((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args));
    expect(install?.args).toMatch(/--omit=dev/);
    expect(install?.args).toMatch(/--no-audit/);
    expect(install?.args).toMatch(/--no-fund/);
    expect(installs.filter((i) => i.keyword === 'RUN' && /\bnpm install\b/.test(i.args))).toEqual([]);
    if (!install) return;
    expect(envOf(install.stage).MONGOMS_DISABLE_POSTINSTALL).toBe('1');
    // For layer caching, nothing but manifests reaches the install: no COPY of the whole
    // context or of sources in its stage (or its parents) before it.
    const before = lineage(install.stage)
      .flatMap((s) => (s === install.stage ? s.instructions.slice(0, install.index) : s.instructions))
      .filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD');
    for (const copy of before) {
      const sources = copy.args.replace(/--\S+/g, '').trim().split(/\s+/).slice(0, -1);
      const fromStage = /--from=(\S+)/.exec(copy.args)?.[1];
      if (fromStage) {
        // Copied from another stage: that stage must only gather manifests.
        const source = stages.find((s) => s.name === fromStage);
        expect(source?.instructions.map((i) => i.args).join('\n')).toMatch(/package\.json/);
        expect(sources.every((s) => /manifests/.test(s))).toBe(true);
      } else {
        for (const s of sources)
          expect(s).toMatch(/(^|\/)(package\.json|package-lock\.json|\*\/package\.json|ensure-install\.js)$/);
      }
    }
  });

  test('a build stage compiles with scripts/build.js (tsc, type errors fail it) after installing dev dependencies', () => {
    const build = stages.find((stage) =>
      stage.instructions.some((i) => i.keyword === 'RUN' && /\bnode scripts\/build\.js\b/.test(i.args)),
    );
    expect(build).toBeDefined();
    if (!build) return;
    expect(build).not.toBe(finalStage);
    const runs = build.instructions.map((i, index) => ({ ...i, index }));
    const install = runs.find((i) => i.keyword === 'RUN' && /\bnpm ci\b/.test(i.args));
    const compile = runs.find((i) => i.keyword === 'RUN' && /\bnode scripts\/build\.js\b/.test(i.args));
    // typescript and the @types packages are dev dependencies (NODE_ENV=production omits them).
    expect(install?.args).toMatch(/--include=dev/);
    expect(compile?.args).not.toMatch(/--no-check/);
    // The manifests alone reach the install (cached across code changes); sources after it.
    const copies = runs.filter((i) => i.keyword === 'COPY');
    for (const copy of copies.filter((c) => c.index < (install?.index ?? 0)))
      expect(copy.args).toMatch(/--from=manifests/);
    const copied = copies.filter((c) => c.index > (install?.index ?? 0)).map((c) => c.args);
    for (const needed of ['tsconfig.json', 'tsconfig.build.json', 'scripts/build.js', 'libs', 'services'])
      expect(copied.some((args) => args.split(/\s+/).slice(0, -1).includes(needed))).toBe(true);
  });

  test('the final stage lays the compiled libs and service over the sources, then checks they resolve', () => {
    const build = stages.find((stage) =>
      stage.instructions.some((i) => i.keyword === 'RUN' && /\bnode scripts\/build\.js\b/.test(i.args)),
    );
    const instructions = lineage(finalStage)
      .reverse()
      .flatMap((stage) => stage.instructions);
    const copies = instructions.map((i, index) => ({ ...i, index })).filter((i) => i.keyword === 'COPY');
    const fromBuild = copies.filter((c) => c.args.includes(`--from=${build?.name}`));
    const compiledLibs = fromBuild.find((c) => /\/dist\/libs\s+\.\/libs$/.test(c.args));
    const compiledService = fromBuild.find((c) =>
      /\/dist\/services\/\$\{?SERVICE\}?\s+\.\/services\/\$\{?SERVICE\}?$/.test(c.args),
    );
    expect(compiledLibs).toBeDefined();
    expect(compiledService).toBeDefined();
    // Over the sources (so the rewritten manifests win), never under them.
    const sources = copies.filter(
      (c) => !c.args.includes('--from=') && /(^|\s)(libs|services\/)/.test(c.args),
    );
    expect(sources.length).toBeGreaterThanOrEqual(2);
    for (const source of sources) {
      expect(source.index).toBeLessThan(compiledLibs?.index ?? -1);
      expect(source.index).toBeLessThan(compiledService?.index ?? -1);
    }
    // The build fails, not the pod, when a workspace would load TypeScript.
    const checks = instructionsOf(finalStage, 'RUN').join('\n');
    expect(checks).toMatch(/src\/main\.js/);
    expect(checks).toMatch(/require\.resolve/);
    expect(checks).toMatch(/not compiled JavaScript/);
  });

  test('the final stage takes ARG SERVICE and keeps it as ENV SERVICE for the command', () => {
    const args = finalStage.instructions;
    const argIndex = args.findIndex((i) => i.keyword === 'ARG' && /^SERVICE(=|$)/.test(i.args));
    const envIndex = args.findIndex((i) => i.keyword === 'ENV' && /\bSERVICE=\$\{?SERVICE\}?/.test(i.args));
    expect(argIndex).toBeGreaterThanOrEqual(0);
    expect(envIndex).toBeGreaterThan(argIndex);
  });

  test('sets NODE_ENV=production and exposes 3000 and 3001', () => {
    expect(envOf(finalStage).NODE_ENV).toBe('production');
    const exposed = instructionsOf(finalStage, 'EXPOSE').flatMap((a) => a.split(/\s+/));
    expect(exposed).toEqual(expect.arrayContaining(['3000', '3001']));
  });

  test('runs as a non-root user, the uid every Kubernetes Deployment runs its pods as', () => {
    const user = instructionsOf(finalStage, 'USER').at(-1);
    expect(user).toBeDefined();
    const name = String(user).split(':')[0];
    expect(['root', '0', '']).not.toContain(name);
    const deployments = readListedResources().filter(({ obj }) => obj.kind === 'Deployment');
    expect(deployments.length).toBeGreaterThanOrEqual(2);
    for (const { file, obj } of deployments) {
      const runAsUser = at(obj, 'spec.template.spec.securityContext.runAsUser');
      expect([file, ['node', String(runAsUser)].includes(String(name))]).toEqual([file, true]);
      expect([file, runAsUser]).toEqual([file, 1000]); // the node user of the node images
    }
  });

  test("CMD runs the compiled services/<SERVICE>/src/main.js with node and the services' node flags, no tsx, node as the process (exec)", () => {
    expect(instructionsOf(finalStage, 'ENTRYPOINT').filter((e) => !/^\[\s*\]$/.test(e))).toEqual([]);
    const cmd = instructionsOf(finalStage, 'CMD').at(-1);
    const argv = execForm(String(cmd));
    expect(argv).toBeDefined(); // exec form: no shell wrapped around it by Docker
    const command = (argv as string[]).join(' ');
    // The flags npm start gives every service (tools/topology), in the same order: a pod runs
    // with what was measured.
    const flags = SERVICE_NODE_FLAGS.map((flag) => `${flag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `).join(
      '',
    );
    expect(command).toMatch(new RegExp(`node ${flags}"?services\\/\\$\\{?SERVICE\\}?\\/src\\/main\\.js"?$`));
    expect(command).not.toMatch(/tsx|--import|--require|\.ts\b/);
    if ((argv as string[])[0]?.endsWith('sh')) {
      // Through a shell only to expand $SERVICE, which must then exec node to hand it PID 1.
      expect(argv?.[1]).toBe('-c');
      expect(argv?.[2]).toMatch(/^exec node /);
    } else {
      expect(argv?.[0]).toBe('node');
    }
  });

  test('has a HEALTHCHECK that GETs /healthz with node fetch (no curl in the slim image)', () => {
    const healthcheck = instructionsOf(finalStage, 'HEALTHCHECK').at(-1) ?? '';
    const argv = execForm(healthcheck.replace(/^(--\S+\s+)*CMD\s+/, ''));
    expect(argv?.[0]).toBe('node');
    expect(argv?.join(' ')).toMatch(/fetch\(.*\/healthz/);
    expect(healthcheck).not.toMatch(/curl|wget/);
  });
});

/** The stages an image is made of: its own lineage and every stage it copies from, transitively. */
function stagesOf(stage: Stage, seen = new Set<Stage>()): Set<Stage> {
  for (const s of lineage(stage)) {
    if (seen.has(s)) continue;
    seen.add(s);
    for (const args of instructionsOf(s, 'COPY')) {
      const from = /--from=(\S+)/.exec(args)?.[1];
      const source = stages.find((other) => other.name === from);
      if (source) stagesOf(source, seen);
    }
  }
  return seen;
}

/** The source paths of a COPY (its last argument is the destination). */
const copySources = (args: string): string[] => args.replace(/--\S+/g, '').trim().split(/\s+/).slice(0, -1);

/**
 * Runs the manifests stage's RUN against a small tree, with its absolute paths (/src,
 * /manifests, /tool-manifests) moved under a temporary directory: what it really copies where.
 */
function runManifestsStage(): { manifests: string[]; toolManifests: string[] } {
  const stage = stages.find((s) => s.name === 'manifests');
  const script = stage ? instructionsOf(stage, 'RUN').join('\n') : '';
  const dir = mkdtempSync(path.join(tmpdir(), 'dockerfile-manifests-'));
  try {
    for (const file of [
      'package.json',
      'package-lock.json',
      'scripts/ensure-install.js',
      'scripts/node24/package.json',
      'libs/http/package.json',
      'libs/http/src/index.ts',
      'services/gateway/package.json',
      'tools/mpesa-simulator/package.json',
      'tools/mpesa-simulator/src/cli.ts',
    ]) {
      mkdirSync(path.dirname(path.join(dir, 'src', file)), { recursive: true });
      writeFileSync(path.join(dir, 'src', file), '{}');
    }
    const local = script.replace(/(^|[\s"'(=])\/(src|manifests|tool-manifests)\b/g, `$1${dir}/$2`);
    execFileSync('sh', ['-c', local], { stdio: 'pipe' });
    const list = (root: string): string[] =>
      existsSync(root)
        ? readdirSync(root, { recursive: true, withFileTypes: true })
            .filter((e) => e.isFile())
            .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
            .sort()
        : [];
    return {
      manifests: list(path.join(dir, 'manifests')),
      toolManifests: list(path.join(dir, 'tool-manifests')),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('tools/ (simulators, receiver, local servers, test harness) is in no service image', () => {
  const toolsStage = stages.find((s) => s.name === 'tools');

  test('the service image (the last stage) copies no tools/ and no tool manifests, in any stage it is made of', () => {
    const made = [...stagesOf(finalStage)];
    expect(made).not.toContain(toolsStage);
    const copied = made
      .filter((s) => s.name !== 'manifests') // gathers the context; what leaves it is checked below
      .flatMap((s) =>
        instructionsOf(s, 'COPY').map((args) => ({ stage: s.name, sources: copySources(args) })),
      )
      .filter(({ sources }) => sources.some((src) => /(^|\/)tools?(\/|$)|tool-manifests/.test(src)));
    expect(copied).toEqual([]);
  });

  test('the manifests the service images install from hold libs/ and services/ only; tools/ go apart', () => {
    const { manifests, toolManifests } = runManifestsStage();
    expect(manifests).toEqual([
      'libs/http/package.json',
      'package-lock.json',
      'package.json',
      'scripts/ensure-install.js',
      'scripts/node24/package.json',
      'services/gateway/package.json',
    ]);
    expect(toolManifests).toEqual(['tools/mpesa-simulator/package.json']);
  });

  test('a `tools` target (not the default) holds tools/ over the libs, with its own install, as a non-root user', () => {
    expect(toolsStage).toBeDefined();
    if (!toolsStage) return;
    expect(toolsStage).not.toBe(finalStage);
    const sources = instructionsOf(toolsStage, 'COPY').flatMap(copySources);
    expect(sources).toEqual(expect.arrayContaining(['tools', 'libs']));
    const made = [...stagesOf(toolsStage)];
    const installs = made.flatMap((s) => instructionsOf(s, 'RUN')).filter((r) => /\bnpm ci\b/.test(r));
    expect(installs.some((r) => /--omit=dev/.test(r))).toBe(true);
    const toolManifests = made
      .flatMap((s) => instructionsOf(s, 'COPY'))
      .some((a) => /tool-manifests/.test(a));
    expect(toolManifests).toBe(true);
    const user = instructionsOf(toolsStage, 'USER').at(-1);
    expect(['root', '0', '', undefined]).not.toContain(user?.split(':')[0]);
  });
});

/** A .dockerignore pattern as a regex: `**` spans directories, `*` and `?` stay within one. */
function patternRegex(pattern: string): RegExp {
  const p = pattern.replace(/^\/+|\/+$/g, '');
  let re = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i] as string;
    if (c === '*' && p[i + 1] === '*') {
      const slash = p[i + 2] === '/';
      re += slash ? '(.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^$()|{}[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Docker's .dockerignore matching: patterns against the path or any of its parent dirs. */
function dockerIgnored(patterns: string[], file: string): boolean {
  const prefixes = file.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
  let ignored = false;
  for (const raw of patterns) {
    const negate = raw.startsWith('!');
    const regex = patternRegex(negate ? raw.slice(1) : raw);
    if (prefixes.some((p) => regex.test(p))) ignored = !negate;
  }
  return ignored;
}

function listFiles(dir: string): string[] {
  return readdirSync(path.join(repoRoot, dir)).flatMap((entry) => {
    const relative = `${dir}/${entry}`;
    if (entry === 'node_modules') return [];
    return statSync(path.join(repoRoot, relative)).isDirectory() ? listFiles(relative) : [relative];
  });
}

/**
 * Runs the dashboard stage's RUN from the repository (its WORKDIR /app) for one SERVICE, with
 * its absolute output directory moved under a temporary one: the files it leaves there, relative
 * to it, as the final stage's COPY of that directory lays them over /app.
 */
function runDashboardStage(stage: Stage, service: string): string[] {
  const script = instructionsOf(stage, 'RUN').join('\n');
  const out = /mkdir -p (\/[\w/-]+)/.exec(script)?.[1] ?? '';
  expect(out).toMatch(/^\/\w/);
  const dir = mkdtempSync(path.join(tmpdir(), 'dockerfile-dashboard-'));
  try {
    execFileSync('sh', ['-c', script.replaceAll(out, `${dir}${out}`)], {
      cwd: repoRoot,
      env: { ...process.env, SERVICE: service },
      stdio: 'pipe',
    });
    return readdirSync(path.join(dir, out), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.relative(path.join(dir, out), path.join(e.parentPath, e.name)))
      .sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the partner dashboard ships in the gateway image (issue 28)', () => {
  const dashboard = stages.find((s) =>
    instructionsOf(s, 'RUN').some((r) => /\bservices\/dashboard\/build\.mjs\b/.test(r)),
  );
  const copies = instructionsOf(finalStage, 'COPY').filter((c) => c.includes(`--from=${dashboard?.name}`));

  test('a stage apart builds it with services/dashboard/build.mjs over the dev install, which no image keeps', () => {
    expect(dashboard).toBeDefined();
    if (!dashboard) return;
    expect(lineage(finalStage)).not.toContain(dashboard);
    // vite and the plugin are the dashboard's devDependencies: only an install with them builds.
    const installs = lineage(dashboard).flatMap((s) =>
      instructionsOf(s, 'RUN').filter((r) => /\bnpm ci\b/.test(r)),
    );
    expect(installs.some((r) => /--include=dev/.test(r))).toBe(true);
    expect(instructionsOf(dashboard, 'ARG')).toContain('SERVICE');
  });

  test('the final stage copies only the built files, where the compiled gateway looks by default', () => {
    expect(copies).toHaveLength(1);
    const [source = '', destination] = (copies[0] ?? '').replace(/--\S+/g, '').trim().split(/\s+/);
    expect(destination?.replace(/\/$/, '')).toBe('.');
    // The last WORKDIR of the nearest stage that sets one: where `.` is.
    const workdir = lineage(finalStage).flatMap((s) => instructionsOf(s, 'WORKDIR').reverse())[0];
    expect(workdir).toBe('/app');
    expect(source).not.toMatch(/^\/app\b/);
    // The gateway's default, from its source file as from its compiled file (same layout).
    const served = path.relative(repoRoot, DASHBOARD_BUILD_DIR);
    expect(served).toBe('services/dashboard/dist');
    const files = runDashboardStage(dashboard as Stage, 'gateway');
    expect(files).toContain(`${served}/index.html`);
    expect(files.some((f) => new RegExp(`^${served}/assets/[^/]+\\.js$`).test(f))).toBe(true);
    // Only the static files: no sources, no install, no build stamp.
    expect(files.filter((f) => !f.startsWith(`${served}/`) || /node_modules|\.build\.json$/.test(f))).toEqual(
      [],
    );
  }, 120_000);

  test('no other service gets the files, nor builds them', () => {
    expect(runDashboardStage(dashboard as Stage, 'policy')).toEqual([]);
  });

  test('one way to find them: neither the image, docker-compose nor k8s/ sets DASHBOARD_DIR', () => {
    expect(envOf(finalStage).DASHBOARD_DIR).toBeUndefined();
    expect(readRepoFile('docker-compose.yml')).not.toContain('DASHBOARD_DIR');
    expect(JSON.stringify(readListedResources())).not.toContain('DASHBOARD_DIR');
  });
});

describe('.dockerignore', () => {
  const patterns = readRepoFile('.dockerignore')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));

  test.each([
    'node_modules/express/index.js',
    'libs/http/node_modules/x/index.js',
    '.git/HEAD',
    '.tmp/run/file',
    'coverage/lcov.info',
    'services/gateway/src/app.test.ts',
    '.env',
    'dist/services/gateway/src/main.js',
    'scripts/start.ts',
    // A local build never stands in for the image's own; the dashboard's tests never ship.
    'services/dashboard/dist/index.html',
    'services/dashboard/test/app.test.ts',
  ])('excludes %s', (file) => {
    expect(dockerIgnored(patterns, file)).toBe(true);
  });

  test.each([
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'scripts/build.js',
    'scripts/ensure-install.js',
    'scripts/node24/package.json',
    'scripts/prune-service-deps.js',
    'services/gateway/src/main.ts',
    // What the dashboard stage builds from.
    'services/dashboard/build.mjs',
    'services/dashboard/index.html',
    'services/dashboard/src/main.tsx',
  ])('keeps %s', (file) => {
    expect(dockerIgnored(patterns, file)).toBe(false);
  });

  test('keeps every non-test file of the workspaces (what the images run, the tools image too)', () => {
    const workspaceFiles = ['libs', 'services', 'tools']
      .flatMap((dir) => readdirSync(path.join(repoRoot, dir)).map((name) => `${dir}/${name}`))
      .filter((dir) => statSync(path.join(repoRoot, dir)).isDirectory())
      .flatMap((dir) => [`${dir}/package.json`, ...listFiles(dir).filter((f) => /\/(src|bin)\//.test(f))])
      .filter((f) => !/\.test\.ts$/.test(f));
    expect(workspaceFiles.length).toBeGreaterThan(0);
    expect(workspaceFiles.filter((f) => dockerIgnored(patterns, f))).toEqual([]);
  });

  test('the matcher itself honours negation and ** (so the checks above can fail)', () => {
    expect(dockerIgnored(['**/*.ts', '!keep/**'], 'a/b.ts')).toBe(true);
    expect(dockerIgnored(['**/*.ts', '!keep/**'], 'keep/b.ts')).toBe(false);
    expect(dockerIgnored(['libs'], 'libs/config/src/index.ts')).toBe(true);
  });
});

describe('each service with a Kubernetes Deployment can be built by this Dockerfile', () => {
  const deployed = readdirSync(path.join(repoRoot, 'k8s/base'))
    .map((f) => /^(.+)-deployment\.yaml$/.exec(f)?.[1])
    .filter((name): name is string => Boolean(name));

  test.each(deployed)(
    'services/%s has src/main.ts, which the build compiles (tsconfig.build.json)',
    (name) => {
      expect(listFiles(`services/${name}`)).toContain(`services/${name}/src/main.ts`);
      expect(buildConfig.include).toEqual(expect.arrayContaining(['services/*/src/**/*']));
    },
  );

  test('tsx is still a production dependency of policy: docker-compose runs chain-setup from its image through it', () => {
    // The chain-setup one-shot (libs/chain/scripts/deploy-registry.ts, policy image).
    for (const name of ['policy']) {
      const manifest = JSON.parse(readRepoFile(`services/${name}/package.json`)) as {
        dependencies?: Record<string, string>;
      };
      expect([name, Object.keys(manifest.dependencies ?? {}).includes('tsx')]).toEqual([name, true]);
    }
  });
});

describe('tsconfig.build.json (what `npm run build` and the image compile)', () => {
  test('emits the src/ of every lib and service into dist/ mirroring the repository, tests and tools/ left out', () => {
    expect(buildConfig.extends).toBe('./tsconfig.json');
    expect(buildConfig.compilerOptions).toMatchObject({ noEmit: false, rootDir: '.', outDir: 'dist' });
    expect(buildConfig.compilerOptions?.types).not.toContain('jest');
    expect([...(buildConfig.include ?? [])].sort()).toEqual(['libs/*/src/**/*', 'services/*/src/**/*']);
    expect(buildConfig.exclude).toEqual(expect.arrayContaining(['**/*.test.ts']));
  });

  test('npm run build runs the same script as the image, and dist/ is not committed', () => {
    const scripts = (JSON.parse(readRepoFile('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.build).toBe('node scripts/build.js');
    expect(readRepoFile('.gitignore').split('\n')).toContain('dist/');
  });
});
