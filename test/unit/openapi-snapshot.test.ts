/**
 * docs/openapi/{partner,ops}.json record the documents the platform serves. A change to a route
 * declaration changes them, so it fails here until the snapshot is re-recorded with
 * `npm run openapi:snapshot`, and a breaking change fails until the version is decided
 * (docs/decisions.md, "A record of API changes").
 */
import { API_VERSION } from '@parametric/contracts';
import { changelogVersions, formatChanges } from '../../scripts/openapi-changes';
import { readChangelog, type SnapshotState, snapshotStates } from '../../scripts/openapi-snapshot';

const states = snapshotStates(readChangelog());

/** Undefined when the snapshot matches; otherwise what a developer reads to fix it. */
function staleness(state: SnapshotState): string | undefined {
  if (state.upToDate) return undefined;
  if (!state.snapshot) return `${state.file} is missing: run \`npm run openapi:snapshot\` and commit it.`;
  const listed =
    state.changes.length > 0
      ? formatChanges(state.changes)
      : '  (wording only: descriptions, summaries, examples)';
  return (
    `${state.file} differs from the document the platform serves:\n${listed}\n` +
    'Run `npm run openapi:snapshot`, commit the snapshot, and record the changes in CHANGELOG.md.'
  );
}

describe.each(states.map((state) => [state.name, state] as const))(
  'the %s OpenAPI document',
  (_name, state) => {
    it('has no breaking change without a new major version, and its version has a CHANGELOG.md entry', () => {
      expect(state.problems).toEqual([]);
    });

    it('matches its committed snapshot in docs/openapi/', () => {
      expect(staleness(state)).toBeUndefined();
    });
  },
);

describe('CHANGELOG.md', () => {
  it('has an entry for the version the documents carry, newest first after [Unreleased]', () => {
    const versions = changelogVersions(readChangelog());
    expect(versions[0]).toBe(API_VERSION);
  });
});
