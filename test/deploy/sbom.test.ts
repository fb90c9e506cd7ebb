/**
 * `npm run sbom` (scripts/sbom.js): each service's CycloneDX SBOM lists exactly the packages its
 * image holds (what scripts/prune-service-deps.js keeps), with versions and integrity hashes
 * from the lockfile, and the same lockfile always gives the same file.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SERVICES } from './services';
import { repoRoot } from './support';

interface Component {
  group?: string;
  name: string;
  version: string;
  purl: string;
  hashes?: { alg: string; content: string }[];
}
interface Sbom {
  bomFormat: string;
  specVersion: string;
  serialNumber: string;
  metadata: { component: { name: string; purl: string } };
  components: Component[];
  dependencies: { ref: string; dependsOn: string[] }[];
}

const { serviceClosure } = require('../../scripts/prune-service-deps.js') as {
  serviceClosure(packages: Record<string, unknown>, service: string): Set<string>;
};
const lock = JSON.parse(readFileSync(path.join(repoRoot, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { name?: string; link?: boolean }>;
};

let out: string;
const sbom = (service: string): Sbom =>
  JSON.parse(readFileSync(path.join(out, `${service}.cdx.json`), 'utf8')) as Sbom;

beforeAll(() => {
  out = mkdtempSync(path.join(tmpdir(), 'sbom-'));
  execFileSync(process.execPath, ['scripts/sbom.js', '--out-dir', out], { cwd: repoRoot, stdio: 'pipe' });
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

test.each(SERVICES.map((s) => [s.name]))(
  '%s: the packages of its pruned image, no more, no less',
  (service) => {
    const bom = sbom(service);
    expect([bom.bomFormat, bom.specVersion, bom.metadata.component.name]).toEqual([
      'CycloneDX',
      '1.5',
      service,
    ]);
    const listed = bom.components.map((c) => (c.group ? `${c.group}/${c.name}` : c.name));
    const kept = [...serviceClosure(lock.packages, service)]
      .filter((l) => !lock.packages[l]?.link && l !== `services/${service}`)
      .map((l) =>
        l.includes('node_modules/') ? l.slice(l.lastIndexOf('node_modules/') + 13) : lock.packages[l]?.name,
      );
    expect([...new Set(listed)].sort()).toEqual([...new Set(kept)].sort());
    expect(listed).not.toContain('jest');
    expect(listed).not.toContain('@parametric/test-harness');
    // Every third-party package carries the lockfile's SHA-512.
    for (const c of bom.components.filter((c) => c.group !== '@parametric'))
      expect(c.hashes?.[0]?.content).toMatch(/^[0-9a-f]{128}$/);
    // Every edge joins components (the service itself being the metadata's).
    const refs = new Set([...bom.components.map((c) => c.purl), bom.metadata.component.purl]);
    const dangling = bom.dependencies.flatMap((d) => [d.ref, ...d.dependsOn]).filter((ref) => !refs.has(ref));
    expect(dangling).toEqual([]);
  },
);

test('the same lockfile gives byte-identical SBOMs (no timestamp, serial number from the content)', () => {
  const again = mkdtempSync(path.join(tmpdir(), 'sbom-again-'));
  try {
    execFileSync(process.execPath, ['scripts/sbom.js', '--out-dir', again, 'gateway'], {
      cwd: repoRoot,
      stdio: 'pipe',
    });
    expect(readFileSync(path.join(again, 'gateway.cdx.json'), 'utf8')).toBe(
      readFileSync(path.join(out, 'gateway.cdx.json'), 'utf8'),
    );
  } finally {
    rmSync(again, { recursive: true, force: true });
  }
});
