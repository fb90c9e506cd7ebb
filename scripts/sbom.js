#!/usr/bin/env node
// `npm run sbom`: a CycloneDX 1.5 SBOM of each service's image, dist/sbom/<service>.cdx.json.
//
//   node scripts/sbom.js [--out-dir <dir>] [<service>...]
//
// The components are exactly what the image holds: the packages scripts/prune-service-deps.js
// keeps for the service (the Dockerfile's `service-deps`), read from package-lock.json, with
// their version, purl, lockfile integrity (as a SHA-512 hash) and licence, and the dependency
// edges between them. Offline and reproducible: no network, no node_modules, no timestamp, and a
// serial number derived from the content. Packages of another platform (fsevents,
// @esbuild/darwin-arm64) are listed as the lockfile lists them: the image may not hold them.
//
// Not `npm sbom --workspace services/<name> --omit dev`: in this monorepo it lists the
// service's dev dependencies (the test harness, mongodb-memory-server) and leaves out packages
// the root also has as dev dependencies (mongoose, tsx), see docs/decisions.md.
const { createHash } = require('node:crypto');
const { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { serviceGraph } = require('./prune-service-deps.js');

const root = path.resolve(__dirname, '..');

/** The package name of a lockfile location (node_modules/@scope/name, nested or not). */
function nameAt(location, entry) {
  if (entry.name) return entry.name;
  return location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

function purlOf(name, version) {
  return `pkg:npm/${name.startsWith('@') ? `%40${name.slice(1)}` : name}@${version}`;
}

/** A component of a package, or of a workspace (no integrity: built from this repository). */
function componentOf(name, entry) {
  const scoped = name.startsWith('@');
  const component = {
    type: 'library',
    'bom-ref': purlOf(name, entry.version),
    ...(scoped
      ? { group: name.slice(0, name.indexOf('/')), name: name.slice(name.indexOf('/') + 1) }
      : { name }),
    version: entry.version,
    purl: purlOf(name, entry.version),
  };
  const [alg, digest] = String(entry.integrity ?? '').split('-');
  if (alg === 'sha512' && digest)
    component.hashes = [{ alg: 'SHA-512', content: Buffer.from(digest, 'base64').toString('hex') }];
  if (typeof entry.license === 'string') component.licenses = [{ expression: entry.license }];
  return component;
}

function sbomOf(service) {
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  const { packages } = lock;
  const graph = serviceGraph(packages, service);
  // A workspace link stands for its directory: components are the directories and packages.
  const target = (location) => (packages[location]?.link ? packages[location].resolved : location);
  const refOf = (location) => {
    const at = target(location);
    const entry = packages[at];
    return purlOf(at.includes('node_modules/') ? nameAt(at, entry) : entry.name, entry.version);
  };
  const locations = [...graph.keys()].filter((l) => !packages[l].link && l !== `services/${service}`);
  const components = locations
    .map((l) =>
      componentOf(l.includes('node_modules/') ? nameAt(l, packages[l]) : packages[l].name, packages[l]),
    )
    .sort((a, b) => a['bom-ref'].localeCompare(b['bom-ref']));
  const unique = components.filter((c, i) => i === 0 || components[i - 1]['bom-ref'] !== c['bom-ref']);
  const self = packages[`services/${service}`];
  const dependencies = [...graph.entries()]
    .filter(([l]) => !packages[l].link)
    .map(([l, requires]) => ({ ref: refOf(l), dependsOn: [...new Set(requires.map(refOf))].sort() }))
    .sort((a, b) => a.ref.localeCompare(b.ref));
  const body = {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    version: 1,
    metadata: {
      tools: { components: [{ type: 'application', name: 'scripts/sbom.js' }] },
      component: {
        type: 'application',
        'bom-ref': refOf(`services/${service}`),
        group: '@parametric',
        name: service,
        version: self.version,
        purl: refOf(`services/${service}`),
      },
    },
    components: unique,
    dependencies: dependencies.filter((d, i) => i === 0 || dependencies[i - 1].ref !== d.ref),
  };
  const hash = createHash('sha256').update(JSON.stringify(body)).digest('hex');
  const serial = `urn:uuid:${hash.slice(0, 8)}-${hash.slice(8, 12)}-5${hash.slice(13, 16)}-a${hash.slice(17, 20)}-${hash.slice(20, 32)}`;
  return { bomFormat: body.bomFormat, specVersion: body.specVersion, serialNumber: serial, ...body };
}

function main() {
  const args = process.argv.slice(2);
  const outIndex = args.indexOf('--out-dir');
  const out = path.resolve(root, outIndex >= 0 ? String(args[outIndex + 1]) : 'dist/sbom');
  const named = args.filter((a, i) => !a.startsWith('--') && i !== outIndex + 1);
  const services =
    named.length > 0
      ? named
      : // The services that run (a main); services/dashboard is static files the gateway serves.
        readdirSync(path.join(root, 'services')).filter((s) =>
          existsSync(path.join(root, 'services', s, 'src', 'main.ts')),
        );
  mkdirSync(out, { recursive: true });
  for (const service of services.sort()) {
    const sbom = sbomOf(service);
    const file = path.join(out, `${service}.cdx.json`);
    writeFileSync(file, `${JSON.stringify(sbom, null, 2)}\n`);
    console.log(`[sbom] ${path.relative(root, file)}: ${sbom.components.length} components`);
  }
}

module.exports = { sbomOf };
if (require.main === module) main();
