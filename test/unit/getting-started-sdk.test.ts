/**
 * The SDK code docs/getting-started.md shows is the example's code, as it is: each `ts` block of
 * the page is preceded by `<!-- FILE#NAME -->` and equals the lines between `// #region NAME` and
 * `// #endregion NAME` of FILE under examples/, without their common indentation. tsc checks that
 * code (tsconfig.json) and test/e2e/getting-started.test.ts runs it against `npm start`, so what
 * the page shows compiles and works; a block edited on the page alone, or code changed in the
 * example alone, fails here (issue 27). biome formats the page's blocks as well as the example:
 * a statement that it would wrap at the example's indentation but not at none (or the reverse)
 * fails one check or the other, so such a statement is written so that both read it alike
 * (a braced `if`, say). And the examples use only what a partner has: the SDK
 * and node's own modules, no code of the platform's.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const PAGE = path.join(root, 'docs', 'getting-started.md');

interface Block {
  file: string | undefined;
  region: string | undefined;
  code: string;
}

/** The page's `ts` blocks, with the file and region each names (undefined when it names none). */
function tsBlocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^(?:<!-- (\S+)#([\w-]+) -->\n)?```ts\n([\s\S]*?)^```$/gm)].map((m) => ({
    file: m[1],
    region: m[2],
    code: m[3] as string,
  }));
}

/** The lines of region `name` in `source`, dedented, ending with a newline; undefined when absent. */
function region(source: string, name: string): string | undefined {
  const lines = source.split('\n');
  const start = lines.findIndex((line) => line.trim() === `// #region ${name}`);
  const end = lines.findIndex((line) => line.trim() === `// #endregion ${name}`);
  if (start < 0 || end <= start) return undefined;
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((l) => l.trim() !== '').map((l) => l.length - l.trimStart().length));
  return `${body.map((line) => line.slice(indent)).join('\n')}\n`;
}

describe('docs/getting-started.md, "With the SDK"', () => {
  const blocks = tsBlocks(readFileSync(PAGE, 'utf8'));

  it('shows the journey in ts blocks, each naming a region of a file under examples/', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    // A block that names no region would be code nothing compiles or runs.
    expect(
      blocks.filter((b) => !b.file?.startsWith('examples/') || !existsSync(path.join(root, b.file))),
    ).toEqual([]);
  });

  it('shows each region exactly as the example has it', () => {
    for (const { file, region: name, code } of blocks) {
      const source = readFileSync(path.join(root, file as string), 'utf8');
      expect({ where: `${file}#${name}`, code }).toEqual({
        where: `${file}#${name}`,
        code: region(source, name as string),
      });
    }
  });

  it('reads blocks and regions as the checks above need (so they can fail)', () => {
    const source = ['a();', '  // #region x', '  if (b) {', '    c();', '  }', '  // #endregion x'].join(
      '\n',
    );
    expect(region(source, 'x')).toBe('if (b) {\n  c();\n}\n');
    expect(region(source, 'y')).toBeUndefined();
    expect(tsBlocks('<!-- f.ts#x -->\n```ts\nq();\n```\n\n```ts\nr();\n```\n')).toEqual([
      { file: 'f.ts', region: 'x', code: 'q();\n' },
      { file: undefined, region: undefined, code: 'r();\n' },
    ]);
  });
});

describe('examples/', () => {
  const EXAMPLES = path.join(root, 'examples');
  const sources = readdirSync(EXAMPLES, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.split(path.sep).includes('node_modules'))
    .map((file) => path.join(EXAMPLES, file));

  /** What a source imports: `from '…'`, `import '…'` and `import('…')`. */
  const importsOf = (source: string) =>
    [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)].map((m) => m[1] as string);

  /** Allowed: the SDK, node's own modules, and the example's own files. */
  const allowed = (specifier: string) =>
    specifier === '@parametric/sdk' ||
    specifier.startsWith('./') ||
    (specifier.startsWith('node:') && builtinModules.includes(specifier.slice('node:'.length)));

  it("use only what a partner has: @parametric/sdk and node's own modules", () => {
    expect(sources.length).toBeGreaterThan(0);
    const found = sources.flatMap((file) =>
      importsOf(readFileSync(file, 'utf8'))
        .filter((specifier) => !allowed(specifier))
        .map((specifier) => `${path.relative(root, file)}: ${specifier}`),
    );
    expect(found).toEqual([]);
  });

  it('depend on nothing else either (tsx runs the TypeScript)', () => {
    for (const name of readdirSync(EXAMPLES)) {
      const manifest = JSON.parse(readFileSync(path.join(EXAMPLES, name, 'package.json'), 'utf8')) as {
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
      };
      expect({
        name,
        deps: Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }).sort(),
      }).toEqual({
        name,
        deps: ['@parametric/sdk', 'tsx'],
      });
    }
  });

  it('reads imports as the check needs (so it can fail)', () => {
    const source =
      "import { a } from '@parametric/http';\nimport x from './y';\nimport 'express';\nawait import('node:fs');";
    expect(importsOf(source)).toEqual(['@parametric/http', './y', 'express', 'node:fs']);
    expect(importsOf(source).filter((s) => !allowed(s))).toEqual(['@parametric/http', 'express']);
  });
});
