/**
 * Every relative link and image in the repository's pages (README.md and docs/*.md) leads to a
 * file that exists, and every screenshot kept for docs/dashboard.md is shown there: a page moved,
 * or a picture renamed, fails here instead of leaving the reader a broken link.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const pages = [
  'README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** Targets of relative markdown links and images, without their anchors. */
function relativeTargets(markdown: string): string[] {
  return [
    ...new Set(
      [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
        .map((match) => match[1] as string)
        .filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith('#'))
        .map((target) => target.split('#')[0] as string),
    ),
  ];
}

describe.each(pages)('%s', (page) => {
  it('links only to files that exist', () => {
    const text = readFileSync(path.join(root, page), 'utf8');
    const missing = relativeTargets(text).filter(
      (target) => !existsSync(path.join(root, path.dirname(page), target)),
    );
    expect(missing).toEqual([]);
  });
});

it('shows every screenshot kept for docs/dashboard.md, and no picture it shows is missing', () => {
  const text = readFileSync(path.join(root, 'docs/dashboard.md'), 'utf8');
  const shown = [...text.matchAll(/!\[[^\]]*\]\((dashboard-screens\/[^)]+)\)/g)]
    .map((m) => m[1] as string)
    .sort();
  const kept = readdirSync(path.join(root, 'docs/dashboard-screens'))
    .map((name) => `dashboard-screens/${name}`)
    .sort();
  expect(shown).toEqual(kept);
});
