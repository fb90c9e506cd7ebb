import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The gateway's layers, top to bottom (src/README.md says what each holds). A file imports files
 * of its own layer or of a lower one, never of a higher one. A pattern is a path under
 * services/gateway/src, where `*` stands for one folder or file name.
 */
const LAYERS: ReadonlyArray<{ layer: string; files: readonly string[] }> = [
  { layer: 'start-up', files: ['main.ts', 'gateway.ts', 'migrate.ts'] },
  {
    layer: 'request handling',
    files: [
      'partner-routes.ts',
      '*/routes.ts',
      'auth/*',
      'forwarding/*',
      'audit/trail.ts',
      'ops/queue-dashboard.ts',
      'ops/queue-sign-in.ts',
      'dashboard/static.ts',
      'clients/token-endpoint.ts',
      'approvals/gate.ts',
      'rate-limit/limiter.ts',
    ],
  },
  {
    layer: 'domain',
    files: [
      '*/domain.ts',
      '*/view.ts',
      'users/admin-roster.ts',
      'sessions/core.ts',
      'approvals/execute.ts',
      'approvals/needs-approval.ts',
    ],
  },
  {
    layer: 'stores',
    files: [
      'repositories.ts',
      '*/model.ts',
      'sessions/reasons.ts',
      'approvals/store.ts',
      'rate-limit/limits.ts',
      'rate-limit/login-throttle.ts',
    ],
  },
  { layer: 'credential primitives', files: ['credentials/*'] },
  { layer: 'foundation', files: ['config.ts', 'clock.ts'] },
];

const STORES = LAYERS.findIndex((l) => l.layer === 'stores');
const SRC = path.join(__dirname, '../src');

const patternOf = (glob: string) =>
  new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]+')}$`);

/** The layers a file falls in (exactly one, when the table is right). */
function layersOf(file: string): number[] {
  return LAYERS.flatMap((l, i) => (l.files.some((glob) => patternOf(glob).test(file)) ? [i] : []));
}

/** The files under src that `source` (the text of `file`) imports, by its relative specifiers. */
function importsOf(file: string, source: string): string[] {
  const specifiers = [...source.matchAll(/\b(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]);
  return specifiers.map((s) => `${path.posix.join(path.posix.dirname(file), s as string)}.ts`);
}

/** Where a file lives, as the folder view shows it: its folder, or the file itself at the top. */
const roomOf = (file: string) => (file.includes('/') ? `${file.split('/')[0]}/` : file);

/** Every import that points up a layer, or at a file that is not there, as one line each. */
function upwardImports(files: Record<string, string>): string[] {
  const found: string[] = [];
  for (const [file, source] of Object.entries(files)) {
    for (const target of importsOf(file, source)) {
      const [from] = layersOf(file);
      const [to] = layersOf(target);
      if (!(target in files)) found.push(`${file} imports ${target}, which is not a file of src`);
      else if (from !== undefined && to !== undefined && to < from)
        found.push(`${file} (${LAYERS[from]?.layer}) imports ${target} (${LAYERS[to]?.layer})`);
    }
  }
  return found;
}

/**
 * Folders that import each other, through any number of folders: `a/ -> b/` for each import
 * that closes such a circle. Imports of the stores are left out: every folder keeps its models
 * beside its rules, and reads other folders' models (the services' shared layout).
 */
function folderCircles(files: Record<string, string>): string[] {
  const edges = new Map<string, Set<string>>();
  for (const [file, source] of Object.entries(files)) {
    for (const target of importsOf(file, source)) {
      if (layersOf(target)[0] === STORES || roomOf(file) === roomOf(target)) continue;
      edges.set(roomOf(file), (edges.get(roomOf(file)) ?? new Set()).add(roomOf(target)));
    }
  }
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
    from === to ||
    [...(edges.get(from) ?? [])].some((next) => !seen.has(next) && reaches(next, to, seen.add(next)));
  return [...edges].flatMap(([from, tos]) =>
    [...tos].filter((to) => reaches(to, from)).map((to) => `${from} -> ${to}`),
  );
}

const sources: Record<string, string> = Object.fromEntries(
  (readdirSync(SRC, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts'))
    .map((file) => [file.split(path.sep).join('/'), readFileSync(path.join(SRC, file), 'utf8')]),
);

describe('the layers of services/gateway/src', () => {
  it('place every file in exactly one layer, and every pattern matches a file', () => {
    const misplaced = Object.keys(sources).filter((file) => layersOf(file).length !== 1);
    const stale = LAYERS.flatMap((l) => l.files).filter(
      (glob) => !Object.keys(sources).some((file) => patternOf(glob).test(file)),
    );
    expect({ misplaced, stale }).toEqual({ misplaced: [], stale: [] });
  });

  it('have no import from a lower layer to a higher one', () => {
    expect(upwardImports(sources)).toEqual([]);
  });

  it('have no two folders importing each other (their models aside)', () => {
    expect(folderCircles(sources)).toEqual([]);
  });

  it('are checked: a primitive that reaches up, or two folders in a circle, is found', () => {
    expect(
      upwardImports({
        'credentials/secrets.ts': "import { principalOf } from '../auth/principal';",
        'auth/principal.ts': "import type { UserDoc } from '../users/model';",
        'users/model.ts': '',
      }),
    ).toEqual([
      'credentials/secrets.ts (credential primitives) imports auth/principal.ts (request handling)',
    ]);
    expect(
      folderCircles({
        'audit/trail.ts': "import { opsOrganizationView } from '../ops/domain';",
        'ops/queue-dashboard.ts': "import {\n  opsActor,\n} from '../audit/trail';",
        'ops/domain.ts': "import type { AuditModel } from '../audit/model';",
        'audit/model.ts': '',
      }),
    ).toEqual(['audit/ -> ops/', 'ops/ -> audit/']);
  });
});
