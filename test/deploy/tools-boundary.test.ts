/**
 * tools/ (the simulators, the webhook receiver, the local servers, the test harness) is not the
 * platform: no service image holds it (test/deploy/dockerfile.test.ts), so nothing a service
 * runs may need it. Every file a lib or service ships (all but its tests) and every production
 * dependency in their manifests is read here; tests, scripts/ and bench/ may use tools freely.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './support';

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const workspacesOf = (dir: string): string[] =>
  readdirSync(path.join(repoRoot, dir))
    .map((name) => `${dir}/${name}`)
    .filter((workspace) => existsSync(path.join(repoRoot, workspace, 'package.json')));

const manifestOf = (workspace: string): Manifest =>
  JSON.parse(readFileSync(path.join(repoRoot, workspace, 'package.json'), 'utf8')) as Manifest;

const TOOLS = workspacesOf('tools');
const TOOL_PACKAGES = TOOLS.map((workspace) => manifestOf(workspace).name);
const PLATFORM = [...workspacesOf('libs'), ...workspacesOf('services')];

/** What a workspace ships: every source file but its tests (and fixtures under test/). */
function shippedFiles(workspace: string): string[] {
  const walk = (relative: string): string[] =>
    readdirSync(path.join(repoRoot, relative)).flatMap((entry) => {
      const file = `${relative}/${entry}`;
      if (['node_modules', 'test', 'conformance', 'dist', '.tmp'].includes(entry)) return [];
      if (statSync(path.join(repoRoot, file)).isDirectory()) return walk(file);
      return /\.(ts|js|cjs|mjs)$/.test(entry) && !/\.test\.ts$/.test(entry) ? [file] : [];
    });
  return walk(workspace);
}

/** Module specifiers of static imports and exports, `import()` and `require()`. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\.resolve\s*\(\s*['"]([^'"]+)['"]/g,
  ];
  for (const pattern of patterns)
    for (const match of source.matchAll(pattern)) found.push(match[1] as string);
  return found;
}

/** The tool a specifier in `file` reaches: by package name, or by a relative path into tools/. */
function toolReached(file: string, specifier: string): string | undefined {
  const byName = TOOL_PACKAGES.find((name) => specifier === name || specifier.startsWith(`${name}/`));
  if (byName) return byName;
  if (!specifier.startsWith('.')) return undefined;
  const target = path.relative(repoRoot, path.resolve(repoRoot, path.dirname(file), specifier));
  return target.split(path.sep)[0] === 'tools' ? target : undefined;
}

function toolImports(file: string, source: string): string[] {
  return specifiers(source)
    .map((specifier) => toolReached(file, specifier))
    .filter((tool): tool is string => tool !== undefined);
}

describe('no service or lib needs a tools/ package at run time', () => {
  test('tools/ holds the stand-ins and local servers, each an @parametric/ package', () => {
    expect(TOOL_PACKAGES).toEqual(
      expect.arrayContaining([
        '@parametric/embedded-mongo',
        '@parametric/local-chain',
        '@parametric/local-process',
        '@parametric/local-redis',
        '@parametric/mpesa-simulator',
        '@parametric/rate-simulator',
        '@parametric/test-harness',
        '@parametric/webhook-receiver',
      ]),
    );
    for (const workspace of [...TOOLS, ...PLATFORM])
      expect([workspace, manifestOf(workspace).name]).toEqual([
        workspace,
        expect.stringMatching(/^@parametric\//),
      ]);
  });

  test.each(PLATFORM)(
    '%s: no production dependency on a tool (devDependencies may have them)',
    (workspace) => {
      const manifest = manifestOf(workspace);
      const production = Object.keys({
        ...manifest.dependencies,
        ...manifest.optionalDependencies,
        ...manifest.peerDependencies,
      });
      expect(production.filter((dep) => TOOL_PACKAGES.includes(dep))).toEqual([]);
    },
  );

  test.each(PLATFORM)('%s: no shipped file imports a tool', (workspace) => {
    const files = shippedFiles(workspace);
    expect(files.length).toBeGreaterThan(0);
    const offending = files.flatMap((file) =>
      toolImports(file, readFileSync(path.join(repoRoot, file), 'utf8')).map((tool) => `${file} -> ${tool}`),
    );
    expect(offending).toEqual([]);
  });

  test('the scanner sees every way of importing (so the checks above can fail)', () => {
    const file = 'services/payments/src/example.ts';
    const cases: [string, string[]][] = [
      ["import { startMpesaSimulator } from '@parametric/mpesa-simulator';", ['@parametric/mpesa-simulator']],
      ["import type { LocalChain } from '@parametric/local-chain';", ['@parametric/local-chain']],
      [
        "import {\n  eventually,\n  testMongoUrl,\n} from '@parametric/test-harness';",
        ['@parametric/test-harness'],
      ],
      ["export { freePort } from '@parametric/local-process/src/free-port';", ['@parametric/local-process']],
      ["const { startLocalRedis } = await import('@parametric/local-redis');", ['@parametric/local-redis']],
      ["require('@parametric/embedded-mongo');", ['@parametric/embedded-mongo']],
      ["import '../../../tools/webhook-receiver/src/verify';", ['tools/webhook-receiver/src/verify']],
      ["import { money } from '@parametric/money';", []],
      ["import { x } from './tools/helper';", []],
    ];
    for (const [source, expected] of cases)
      expect([source, toolImports(file, source)]).toEqual([source, expected]);
    // And it reads real code: payments' sources import the platform's libs.
    const payments = shippedFiles('services/payments').flatMap((f) =>
      specifiers(readFileSync(path.join(repoRoot, f), 'utf8')),
    );
    expect(payments).toEqual(expect.arrayContaining(['@parametric/money', '@parametric/http']));
  });
});
