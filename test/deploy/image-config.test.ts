/**
 * The images as configuration (no Docker engine needed): every FROM pinned by digest, a
 * non-root user, the OCI labels, each service's image built from the one runtime target with its
 * own SERVICE build arg and pruned to its own dependencies, and docker-compose.yml, the
 * Kubernetes base and its overlays naming the same per-service images. What the pruned install
 * holds and that a service starts from it is test/deploy/image.test.ts.
 */
import { lineageIn, parseDockerfile, type Stage } from './dockerfile';
import { SERVICES } from './services';
import { isObj, type Obj, parseYaml, readListedResources, readRepoFile } from './support';

const stages = parseDockerfile(readRepoFile('Dockerfile'));
const runtime = stages.at(-1) as Stage;
const compose = parseYaml(readRepoFile('docker-compose.yml'), 'docker-compose.yml') as Obj;
const composeServices = compose.services as Record<string, Obj>;

/** Arguments of a stage's instructions of one kind, its parents' first. */
function inherited(stage: Stage, keyword: string): string[] {
  return lineageIn(stages, stage)
    .reverse()
    .flatMap((s) => s.instructions.filter((i) => i.keyword === keyword).map((i) => i.args));
}

/** LABEL key="value" pairs of a stage and its parents. */
function labelsOf(stage: Stage): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const args of inherited(stage, 'LABEL'))
    for (const m of args.matchAll(/([\w.-]+)=("([^"]*)"|\S+)/g)) labels[m[1] as string] = m[3] ?? m[2] ?? '';
  return labels;
}

/** `FROM` images that are not stages of the Dockerfile (what the builder pulls) and have no digest. */
function unpinnedImages(parsed: readonly Stage[]): string[] {
  const names = new Set(parsed.map((s) => s.name));
  return parsed
    .filter((s) => !names.has(s.from))
    .map((s) => s.from)
    .filter((image) => !/^[\w./:-]+@sha256:[0-9a-f]{64}$/.test(image));
}

/** Containers (and init containers) of a Deployment or Job, with the file they come from. */
function containersOf(obj: Obj): Obj[] {
  const spec = isObj(obj.spec) && isObj(obj.spec.template) ? obj.spec.template.spec : undefined;
  if (!isObj(spec)) return [];
  return [spec.containers, spec.initContainers].flatMap((list) =>
    Array.isArray(list) ? list.filter(isObj) : [],
  );
}

describe('Dockerfile: reproducible, non-root, labelled', () => {
  test('every image the build pulls is pinned by digest (a tag alone can change under a rebuild)', () => {
    expect(stages.some((s) => s.from.startsWith('node:24-bookworm-slim@sha256:'))).toBe(true);
    expect(unpinnedImages(stages)).toEqual([]);
  });

  test('the digest check refuses a FROM without @sha256 (so the check above can fail)', () => {
    const tagged = parseDockerfile('FROM node:24-bookworm-slim AS base\nFROM base AS runtime\n');
    expect(unpinnedImages(tagged)).toEqual(['node:24-bookworm-slim']);
    const shortDigest = parseDockerfile('FROM node:24-bookworm-slim@sha256:6f7b03f7 AS base\n');
    expect(unpinnedImages(shortDigest)).toEqual(['node:24-bookworm-slim@sha256:6f7b03f7']);
  });

  test.each(stages.filter((s) => s === runtime || s.name === 'tools').map((s) => [s.name, s] as const))(
    '%s runs as a non-root numeric user',
    (_name, stage) => {
      const user = inherited(stage, 'USER').at(-1) ?? 'root';
      const [uid = ''] = user.split(':');
      expect(uid).toMatch(/^\d+$/);
      expect(uid).not.toBe('0');
    },
  );

  test('the runtime carries the OCI labels: the title per service, the rest from build args', () => {
    const labels = labelsOf(runtime);
    const args = inherited(runtime, 'ARG').map((a) => a.split('=')[0]);
    expect(labels['org.opencontainers.image.title']).toMatch(/\$\{SERVICE\}/);
    for (const [label, arg] of [
      ['source', 'IMAGE_SOURCE'],
      ['revision', 'IMAGE_REVISION'],
      ['version', 'IMAGE_VERSION'],
      ['created', 'IMAGE_CREATED'],
    ]) {
      expect(labels[`org.opencontainers.image.${label}`]).toBe(`\${${arg}}`);
      expect(args).toContain(arg);
    }
    expect(labels['org.opencontainers.image.licenses']).toMatch(/\S/);
  });

  test("the runtime's dependencies are the shared install pruned to its SERVICE, never the whole install", () => {
    const copies = inherited(runtime, 'COPY').filter((c) => c.includes('--from='));
    const fromDeps = copies.filter((c) => /\s\/app\s+\.\/?$/.test(c)).map((c) => /--from=(\S+)/.exec(c)?.[1]);
    expect(fromDeps).toHaveLength(1);
    const pruned = stages.find((s) => s.name === fromDeps[0]);
    expect(pruned).toBeDefined();
    if (!pruned) return;
    expect(inherited(pruned, 'ARG')).toContain('SERVICE');
    expect(inherited(pruned, 'RUN').some((r) => /\bnpm ci\b.*--omit=dev/.test(r))).toBe(true);
    expect(
      pruned.instructions
        .filter((i) => i.keyword === 'RUN')
        .map((i) => i.args)
        .join('\n'),
    ).toMatch(/prune-service-deps\.js "?\$\{SERVICE\}"?/);
  });
});

describe('each service is its own image, named alike in docker-compose.yml and k8s/', () => {
  const resources = readListedResources().map(({ obj }) => obj);

  test.each(SERVICES.map((s) => [s.name]))('%s', (name) => {
    const built = composeServices[name] as Obj;
    expect(isObj(built.build)).toBe(true);
    const build = built.build as Obj;
    // The default target (the runtime, the last stage) with the service's own SERVICE.
    expect([undefined, runtime.name]).toContain(build.target);
    expect(build.args).toEqual(expect.objectContaining({ SERVICE: name }));
    expect(built.image).toBe(`parametric/${name}:dev`);

    // Every container of the service's Deployment and migrate Job runs its image, and nothing
    // else runs it.
    const images = resources.flatMap((obj) =>
      containersOf(obj).map((c) => ({ owner: String((obj.metadata as Obj).name), image: String(c.image) })),
    );
    const its = images.filter((i) => i.image.split(':')[0] === `parametric/${name}`).map((i) => i.owner);
    expect(its.sort()).toEqual([name, `${name}-migrate`].sort());
  });

  test.each(['dev', 'staging', 'prod'])(
    'overlay %s sets the image of every service, and only those',
    (env) => {
      const kustomization = parseYaml(readRepoFile(`k8s/overlays/${env}/kustomization.yaml`), env) as Obj;
      const names = (kustomization.images as Obj[]).map((i) => i.name).sort();
      expect(names).toEqual(SERVICES.map((s) => `parametric/${s.name}`).sort());
    },
  );

  test('compose runs the one-shot chain-setup from the policy image, not an image of its own', () => {
    expect(composeServices['chain-setup']?.image).toBe('parametric/policy:dev');
    expect(composeServices['chain-setup']?.build).toBeUndefined();
  });
});
