#!/usr/bin/env node
// `npm run build`: compiles what the services run in production to JavaScript under dist/.
//
//   node scripts/build.js [--out-dir <dir>] [--no-check]
//
// tsc (tsconfig.build.json) type-checks and emits the src/ of every lib and service (tests and
// tools/ left out) into dist/, mirroring the repository: libs/http/src/index.ts becomes
// dist/libs/http/src/index.js. Each compiled workspace then gets its package.json in dist/ with
// `main` pointing at the emitted .js (src/index.ts -> src/index.js), and no `types`, `bin` (the
// CLIs start TypeScript through tsx) or `name` (see below). Laid over the workspaces of an
// install (as the Dockerfile does), dist/libs and dist/services make `@parametric/*` resolve to
// compiled JavaScript: node runs services/<name>/src/main.js with no tsx. See docs/deploy.md.
//
// --no-check emits without type checking (test/deploy/image.test.ts: `npm run typecheck`
// checks the same sources already). Plain JavaScript: the Dockerfile runs it with node alone.
const { spawnSync } = require('node:child_process');
const { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
const outIndex = args.indexOf('--out-dir');
const dist = path.resolve(root, outIndex >= 0 ? String(args[outIndex + 1]) : 'dist');
const check = !args.includes('--no-check');

rmSync(dist, { recursive: true, force: true });
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const tscArgs = ['-p', path.join(root, 'tsconfig.build.json'), '--outDir', dist];
if (!check) tscArgs.push('--noCheck');
const compiled = spawnSync(process.execPath, [tsc, ...tscArgs], { cwd: root, stdio: 'inherit' });
if (compiled.status !== 0) {
  console.error(`[build] tsc failed (exit ${compiled.status ?? compiled.signal}); ${dist} is incomplete`);
  process.exit(compiled.status || 1);
}

const written = [];
for (const dir of ['libs', 'services']) {
  for (const name of readdirSync(path.join(root, dir)).sort()) {
    const workspace = `${dir}/${name}`;
    const manifestFile = path.join(root, workspace, 'package.json');
    if (!existsSync(manifestFile) || !existsSync(path.join(dist, workspace))) continue;
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    if (typeof manifest.main === 'string') manifest.main = manifest.main.replace(/\.ts$/, '.js');
    delete manifest.types;
    delete manifest.bin;
    delete manifest.devDependencies;
    // Node resolves a workspace through its directory (node_modules/@parametric/x links to
    // libs/x) and never reads `name`; without it, jest's module map does not find two
    // packages of one name when dist/ sits in the repository.
    delete manifest.name;
    const main = path.join(dist, workspace, manifest.main ?? 'index.js');
    if (!existsSync(main)) {
      console.error(`[build] ${workspace}: main ${manifest.main} was not emitted (${main})`);
      process.exit(1);
    }
    mkdirSync(path.join(dist, workspace), { recursive: true });
    writeFileSync(path.join(dist, workspace, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    written.push(workspace);
  }
}
console.log(`[build] ${path.relative(root, dist) || dist}: ${written.length} workspaces compiled`);
