/**
 * docs/architecture.md walks a newcomer through the repository file by file: every path it
 * names in backticks, and every relative link, must lead somewhere. A file moved or renamed
 * without the page following fails here instead of sending the reader nowhere.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const page = path.join(root, 'docs/architecture.md');
const text = readFileSync(page, 'utf8');

/** The repository's top-level folders: a backticked path starting with one is a repository path. */
const TOP_LEVEL = new Set(
  readdirSync(root).filter(
    (entry) =>
      !entry.startsWith('.') && entry !== 'node_modules' && statSync(path.join(root, entry)).isDirectory(),
  ),
);

/** `services/policy/src/service.ts`, `libs/money`, `tools/`: backticked, with a slash, under a top-level folder. */
function repositoryPaths(markdown: string): string[] {
  const found = [...markdown.matchAll(/`([^`\s]+)`/g)].map((match) => match[1] as string);
  return [
    ...new Set(found.filter((token) => token.includes('/') && TOP_LEVEL.has(token.split('/')[0] as string))),
  ];
}

/** Targets of relative markdown links (`[api.md](api.md)`), without their anchors. */
function relativeLinks(markdown: string): string[] {
  const targets = [...markdown.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] as string);
  return [
    ...new Set(
      targets
        .filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith('#'))
        .map((t) => t.split('#')[0]),
    ),
  ] as string[];
}

describe('docs/architecture.md', () => {
  it('names only files and folders that exist', () => {
    const paths = repositoryPaths(text);
    expect(paths.length).toBeGreaterThan(50);
    expect(paths.filter((p) => !existsSync(path.join(root, p)))).toEqual([]);
  });

  it('links only to files that exist', () => {
    const links = relativeLinks(text);
    expect(links.length).toBeGreaterThan(5);
    expect(links.filter((link) => !existsSync(path.resolve(path.dirname(page), link)))).toEqual([]);
  });

  it('tells a repository path from the other things it puts in backticks', () => {
    const sample = [
      '`services/policy/src/service.ts` and `tools/` and `libs/money`',
      '`/api/openapi.json`, `…/mpesa/<token>/stk`, `@parametric/money`, `resource:action`',
    ].join('\n');
    expect(repositoryPaths(sample)).toEqual(['services/policy/src/service.ts', 'tools/', 'libs/money']);
    expect(
      relativeLinks(
        '[api.md](api.md), [x](https://example.com), [y](#walk-1), [r](../libs/money/README.md#rules)',
      ),
    ).toEqual(['api.md', '../libs/money/README.md']);
  });
});
