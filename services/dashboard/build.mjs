// `npm run build -w @parametric/dashboard` [-- --out-dir <dir>] [--quiet] [--report]: the dashboard's static files (vite), then the
// JavaScript budget of issue 28: the initial load under 250 KB gzipped, measured here on the
// built files and printed, the build failing above it.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { build } from 'vite';

export const JS_BUDGET_BYTES = 250 * 1024;
const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quiet = args.includes('--quiet');
// `--out-dir <dir>`: elsewhere than dist/ (the tests build their own copy).
const outIndex = args.indexOf('--out-dir');
const outDir = outIndex >= 0 ? path.resolve(String(args[outIndex + 1])) : path.join(here, 'dist');
// `--if-stale`: nothing to do when outDir was built from these very sources (npm start).
const ifStale = args.includes('--if-stale');

/** A hash of everything the build reads of ours: the sources, this file, the manifest, the lockfile. */
function sourceHash() {
  const hash = createHash('sha256');
  const files = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? files(path.join(dir, entry.name)) : [path.join(dir, entry.name)],
    );
  const lockfile = path.join(here, '..', '..', 'package-lock.json');
  for (const file of [
    ...files(path.join(here, 'src')).sort(),
    path.join(here, 'index.html'),
    path.join(here, 'package.json'),
    lockfile,
    fileURLToPath(import.meta.url),
  ]) {
    hash.update(path.relative(here, file));
    if (existsSync(file)) hash.update(readFileSync(file));
  }
  return hash.digest('hex');
}
const STAMP = '.build.json';
const hash = sourceHash();
/** What the last build of outDir recorded: its sources' hash and its size line. */
function lastBuild() {
  try {
    return JSON.parse(readFileSync(path.join(outDir, STAMP), 'utf8'));
  } catch {
    return undefined;
  }
}
const last = ifStale ? lastBuild() : undefined;
if (last?.hash === hash) {
  console.log(`${last.size}, unchanged since the last build`);
  process.exit(0);
}
// Built beside outDir, then swapped in: a gateway serving outDir, or another build (several
// platforms starting at once), never sees it half written.
const building = `${outDir}.building-${process.pid}`;

// Served by the gateway at `/dashboard/` (docs/dashboard.md). No inline script or style in the
// output: the gateway's Content-Security-Policy has no `unsafe-inline`. Hashed names under
// assets/ are cached for a year; index.html never.
const built = await build({
  root: here,
  configFile: false,
  base: '/dashboard/',
  plugins: [react()],
  logLevel: quiet ? 'warn' : 'info',
  build: {
    outDir: building,
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});

// `--report`: what the JavaScript is made of, largest module first (rendered bytes before
// minification), to tell what the page needs from what a stray import pulled in.
if (args.includes('--report')) {
  for (const output of [built].flat())
    for (const chunk of output.output ?? [])
      if (chunk.type === 'chunk')
        for (const [id, module] of Object.entries(chunk.modules)
          .sort(([, a], [, b]) => b.renderedLength - a.renderedLength)
          .slice(0, 20))
          console.log(`${String(module.renderedLength).padStart(9)}  ${path.relative(here, id)}`);
}

const assets = path.join(building, 'assets');
let gzipped = 0;
for (const name of readdirSync(assets).filter((file) => file.endsWith('.js')))
  gzipped += gzipSync(readFileSync(path.join(assets, name)), { level: 9 }).length;
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
const size = `[dashboard] JavaScript: ${kb(gzipped)} gzipped (budget ${kb(JS_BUDGET_BYTES)})`;
console.log(size);
if (gzipped > JS_BUDGET_BYTES) {
  console.error(`[dashboard] over the JavaScript budget by ${kb(gzipped - JS_BUDGET_BYTES)}`);
  rmSync(building, { recursive: true, force: true });
  process.exit(1);
}
writeFileSync(path.join(building, STAMP), JSON.stringify({ hash, size }));
const old = `${outDir}.old-${process.pid}`;
if (existsSync(outDir)) renameSync(outDir, old);
renameSync(building, outDir);
rmSync(old, { recursive: true, force: true });
