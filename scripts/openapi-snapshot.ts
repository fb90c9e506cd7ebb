/**
 * `npm run openapi:snapshot`: writes the partner and ops OpenAPI documents the platform serves to
 * docs/openapi/, the committed record test/unit/openapi-snapshot.test.ts holds them to. It prints
 * every change it records, classified (scripts/openapi-changes.ts), and writes nothing when a
 * change is breaking without a new major version, or the version has no CHANGELOG.md entry.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { opsDocument, partnerDocument } from '@parametric/contracts';
import { formatChanges, judgeSnapshot, type SnapshotVerdict } from './openapi-changes';

const ROOT = path.resolve(__dirname, '..');

/** The served documents and where their snapshots live. */
export const SNAPSHOTS = [
  { name: 'partner', file: 'docs/openapi/partner.json', build: partnerDocument },
  { name: 'ops', file: 'docs/openapi/ops.json', build: opsDocument },
] as const;

/** The document as served: `JSON.stringify` of it (services/gateway/src/docs/routes.ts). */
export const served = (build: () => object): object => JSON.parse(JSON.stringify(build())) as object;

export const readChangelog = () => readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8');

export interface SnapshotState extends SnapshotVerdict {
  name: string;
  file: string;
  current: object;
  /** Undefined when the snapshot file does not exist yet. */
  snapshot: object | undefined;
  upToDate: boolean;
}

export function snapshotStates(changelog: string): SnapshotState[] {
  return SNAPSHOTS.map(({ name, file, build }) => {
    const current = served(build);
    const absolute = path.join(ROOT, file);
    const snapshot = existsSync(absolute)
      ? (JSON.parse(readFileSync(absolute, 'utf8')) as object)
      : undefined;
    // A first snapshot records the interface as it is: there is nothing earlier to break.
    const verdict = judgeSnapshot(name, snapshot ?? current, current, changelog);
    return { name, file, current, snapshot, upToDate: isDeepStrictEqual(snapshot, current), ...verdict };
  });
}

function main(): void {
  const states = snapshotStates(readChangelog());
  const problems = states.flatMap((s) => s.problems);
  for (const state of states) {
    if (state.upToDate) {
      console.log(`[openapi:snapshot] ${state.file}: up to date`);
      continue;
    }
    console.log(
      `[openapi:snapshot] ${state.file}: ${state.snapshot ? `${state.changes.length} classified change(s)` : 'new'}`,
    );
    if (state.changes.length > 0) console.log(formatChanges(state.changes));
  }
  if (problems.length > 0) {
    console.error(`\nNothing written:\n${problems.map((p) => `- ${p}`).join('\n')}`);
    process.exit(1);
  }
  const stale = states.filter((s) => !s.upToDate);
  for (const state of stale)
    writeFileSync(path.join(ROOT, state.file), `${JSON.stringify(state.current, null, 2)}\n`);
  if (stale.length > 0) {
    // Written as biome formats JSON, so `npm run format` leaves the snapshots as they are.
    execFileSync(
      path.join(ROOT, 'node_modules/.bin/biome'),
      ['format', '--write', ...stale.map((s) => s.file)],
      { cwd: ROOT, stdio: 'ignore' },
    );
    for (const state of stale) console.log(`[openapi:snapshot] wrote ${state.file}`);
  }
  if (states.some((s) => !s.upToDate && s.changes.length > 0))
    console.log('\nRecord these changes in CHANGELOG.md, under the version heading they ship in.');
}

if (require.main === module) main();
