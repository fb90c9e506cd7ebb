#!/usr/bin/env node
// Prunes a production install (`npm ci --omit=dev` of every lib and service, the Dockerfile's
// `deps` stage) down to what one service loads: the service's workspace, the workspaces it
// depends on, and the packages they need, read from package-lock.json.
//
//   node scripts/prune-service-deps.js <service> [--app <dir>] [--dry-run]
//
// Also required by test/deploy/image.test.ts (serviceClosure, pruneInstall) and scripts/sbom.js.
//
// `npm ci --workspace services/<name> --omit=dev` does not do this: it links only that
// workspace's @parametric/* packages but installs every service's third-party packages (see
// docs/decisions.md, "Per-service images: a pruned install"). Here the lockfile's own record
// of each package (dependencies, optionalDependencies, non-optional peerDependencies) is walked
// from services/<name>, each name resolved as node resolves it (the nearest node_modules up from
// the requiring package), and every installed package outside that set is removed, together
// with the node_modules/@parametric link of any workspace the service does not use and any
// node_modules/.bin link left dangling. Optional peers (typescript for viem) are not kept: the
// packages that declare them load without them (test/deploy/image.test.ts starts a pruned
// service). Plain CommonJS: the Dockerfile runs it with node alone.
const { existsSync, lstatSync, readdirSync, readFileSync, rmSync, statSync } = require('node:fs');
const path = require('node:path');

/**
 * Lockfile locations one service needs (node_modules paths, workspace links and directories),
 * from the `packages` of a package-lock.json, each with the locations it requires.
 */
function serviceGraph(packages, service) {
  const start = `services/${service}`;
  if (!packages[start]) throw new Error(`${start} is not a workspace in package-lock.json`);

  /** Lockfile location of `name` required from the package at `from`, as node would find it. */
  function resolve(from, name) {
    let dir = from;
    for (;;) {
      const candidate = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
      if (packages[candidate]) return candidate;
      if (!dir) return undefined;
      const parent = dir.lastIndexOf('/node_modules/');
      dir = parent >= 0 ? dir.slice(0, parent) : '';
    }
  }

  const graph = new Map();
  const queue = [start];
  while (queue.length > 0) {
    const location = queue.pop();
    if (graph.has(location)) continue;
    const requires = [];
    graph.set(location, requires);
    const entry = packages[location];
    if (entry.link) {
      requires.push(entry.resolved);
      queue.push(entry.resolved);
      continue;
    }
    const optionalPeers = entry.peerDependenciesMeta ?? {};
    const names = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.optionalDependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}).filter((n) => !optionalPeers[n]?.optional),
    ];
    for (const name of names) {
      const found = resolve(location, name);
      // An optional dependency of another platform is in the lockfile but may not be installed.
      if (found) {
        requires.push(found);
        queue.push(found);
      } else if (!(name in (entry.optionalDependencies ?? {})))
        throw new Error(`${location} needs ${name}, which package-lock.json does not hold`);
    }
  }
  return graph;
}

/** The locations of serviceGraph, as a set. */
function serviceClosure(packages, service) {
  return new Set(serviceGraph(packages, service).keys());
}

/** Package directories under a node_modules directory (scoped ones included), relative to app. */
function installedUnder(app, dir) {
  const absolute = path.join(app, dir);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute).flatMap((name) => {
    if (name.startsWith('.')) return [];
    const relative = `${dir}/${name}`;
    if (name.startsWith('@'))
      return readdirSync(path.join(app, relative)).map((scoped) => `${relative}/${scoped}`);
    return [relative];
  });
}

/**
 * Removes from the install at `app` every package `service` does not need; returns what it
 * kept and how many package directories it removed (or would remove, with dryRun).
 */
function pruneInstall(app, service, { dryRun = false } = {}) {
  const lock = JSON.parse(readFileSync(path.join(app, 'package-lock.json'), 'utf8'));
  const keep = serviceClosure(lock.packages, service);
  let removed = 0;
  const prune = (dir) => {
    for (const location of installedUnder(app, dir)) {
      if (!keep.has(location)) {
        removed += 1;
        if (!dryRun) rmSync(path.join(app, location), { recursive: true, force: true });
        continue;
      }
      // A kept package: its own nested node_modules may hold versions only others needed.
      if (!lstatSync(path.join(app, location)).isSymbolicLink()) prune(`${location}/node_modules`);
    }
  };
  prune('node_modules');
  if (!dryRun) {
    const bin = path.join(app, 'node_modules', '.bin');
    if (existsSync(bin)) {
      for (const name of readdirSync(bin)) {
        const link = path.join(bin, name);
        if (!existsSync(link)) rmSync(link, { force: true }); // its package was removed
      }
    }
    for (const name of readdirSync(path.join(app, 'node_modules'))) {
      const scope = path.join(app, 'node_modules', name);
      if (name.startsWith('@') && statSync(scope).isDirectory() && readdirSync(scope).length === 0)
        rmSync(scope, { recursive: true }); // a scope left empty
    }
  }
  return { keep, removed };
}

function main() {
  const args = process.argv.slice(2);
  const appIndex = args.indexOf('--app');
  const service = args.find((a, i) => !a.startsWith('--') && i !== appIndex + 1);
  const app = path.resolve(appIndex >= 0 ? String(args[appIndex + 1]) : process.cwd());
  const dryRun = args.includes('--dry-run');
  if (!service) {
    console.error('usage: node scripts/prune-service-deps.js <service> [--app <dir>] [--dry-run]');
    process.exit(2);
  }
  const { keep, removed } = pruneInstall(app, service, { dryRun });
  const kept = [...keep].filter(
    (l) => l.includes('node_modules/') && !l.startsWith('node_modules/@parametric/'),
  );
  const workspaces = [...keep].filter((l) => !l.includes('node_modules')).sort();
  console.log(
    `[prune] ${service}: kept ${kept.length} packages and ${workspaces.join(', ')}; removed ${removed}${dryRun ? ' (dry run)' : ''}`,
  );
}

module.exports = { serviceClosure, serviceGraph, pruneInstall };
if (require.main === module) main();
