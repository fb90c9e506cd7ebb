/**
 * Shared helpers of the deployment-file tests: read the repo's YAML as the tools that consume
 * it would, and small accessors for the Kubernetes objects. Everything is offline.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';

export const repoRoot = path.resolve(__dirname, '../..');
export const k8sBase = path.join(repoRoot, 'k8s/base');

export function readRepoFile(relative: string): string {
  return readFileSync(path.join(repoRoot, relative), 'utf8');
}

export function repoFileExists(relative: string): boolean {
  return existsSync(path.join(repoRoot, relative));
}

export type Obj = Record<string, unknown>;

export function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses one YAML document and fails on any error or warning (duplicate keys included).
 * Kubernetes reads manifests with YAML 1.1 rules (go-yaml v2: `yes`, `on`, `0777` are not
 * strings), so manifests are parsed as 1.1 to see the values the API server will see.
 */
export function parseYaml(text: string, source: string, version: '1.1' | '1.2' = '1.2'): unknown {
  const doc = parseDocument(text, { version, uniqueKeys: true, prettyErrors: true });
  const problems = [...doc.errors, ...doc.warnings].map((e) => e.message);
  if (problems.length > 0) throw new Error(`${source}: ${problems.join('\n')}`);
  return doc.toJS();
}

export function readK8sFile(name: string): Obj {
  const parsed = parseYaml(readFileSync(path.join(k8sBase, name), 'utf8'), `k8s/base/${name}`, '1.1');
  if (!isObj(parsed)) throw new Error(`k8s/base/${name} is not a YAML mapping`);
  return parsed;
}

export interface Kustomization {
  resources: string[];
  raw: Obj;
}

export function readKustomization(): Kustomization {
  const raw = readK8sFile('kustomization.yaml');
  const resources = raw.resources;
  if (!Array.isArray(resources) || !resources.every((r) => typeof r === 'string')) {
    throw new Error('k8s/base/kustomization.yaml: resources must be a list of file names');
  }
  return { resources, raw };
}

/** `KEY=value` lines of a kustomize env file (comments and blank lines skipped), as kustomize reads them. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`not KEY=value: ${line}`);
    out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

/**
 * The ConfigMaps of the base's configMapGenerator, under their unhashed names (the ones the
 * Deployments refer to; kustomize appends the hash to both when rendering), with the env file
 * each came from.
 */
export function readGeneratedConfigMaps(): { file: string; obj: Obj }[] {
  const generators = readKustomization().raw.configMapGenerator;
  return (Array.isArray(generators) ? generators.filter(isObj) : []).map((gen) => {
    const envs = Array.isArray(gen.envs) ? gen.envs.map(String) : [];
    const data: Record<string, string> = {};
    for (const env of envs) Object.assign(data, parseEnvFile(readFileSync(path.join(k8sBase, env), 'utf8')));
    return {
      file: envs.join(','),
      obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: String(gen.name) }, data },
    };
  });
}

/** The base's platform-config ConfigMap (generated from k8s/base/platform-config.env). */
export function readPlatformConfig(): Obj {
  const found = readGeneratedConfigMaps().find(({ obj }) => nameOf(obj) === 'platform-config');
  if (!found) throw new Error('no platform-config configMapGenerator in k8s/base/kustomization.yaml');
  return found.obj;
}

/** The resources listed in the kustomization and the ConfigMaps it generates, parsed, with the file each came from. */
export function readListedResources(): { file: string; obj: Obj }[] {
  return [
    ...readGeneratedConfigMaps(),
    ...readKustomization().resources.map((file) => ({ file, obj: readK8sFile(file) })),
  ];
}

export function findResource(kind: string, name: string): Obj {
  const found = readListedResources().find(
    ({ obj }) => obj.kind === kind && isObj(obj.metadata) && obj.metadata.name === name,
  );
  if (!found) throw new Error(`no ${kind} named ${name} in k8s/base/kustomization.yaml resources`);
  return found.obj;
}

/** `obj.a.b.c`, failing with the path when a step is missing. */
export function at(obj: unknown, dotted: string): unknown {
  let current: unknown = obj;
  for (const step of dotted.split('.')) {
    if (Array.isArray(current) && /^\d+$/.test(step)) current = current[Number(step)];
    else if (isObj(current)) current = current[step];
    else throw new Error(`${dotted}: no ${step}`);
  }
  return current;
}

export function objAt(obj: unknown, dotted: string): Obj {
  const value = at(obj, dotted);
  if (!isObj(value)) throw new Error(`${dotted} is not a mapping`);
  return value;
}

export function listAt(obj: unknown, dotted: string): Obj[] {
  const value = at(obj, dotted);
  if (!Array.isArray(value) || !value.every(isObj)) throw new Error(`${dotted} is not a list of mappings`);
  return value;
}

/** String data of a ConfigMap (`data`) or Secret (`stringData`, plus decoded `data`). */
export function configData(obj: Obj): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (isObj(obj.data)) {
    for (const [k, v] of Object.entries(obj.data)) {
      out[k] = obj.kind === 'Secret' && typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v;
    }
  }
  if (isObj(obj.stringData)) Object.assign(out, obj.stringData);
  return out;
}

export function nameOf(obj: unknown): string | undefined {
  return isObj(obj) && isObj(obj.metadata) && typeof obj.metadata.name === 'string'
    ? obj.metadata.name
    : undefined;
}

/** The resource of that kind and name among parsed resources (a test's possibly altered copy). */
export function resourceIn(resources: readonly Obj[], kind: string, name: string): Obj | undefined {
  return resources.find((obj) => obj.kind === kind && nameOf(obj) === name);
}

/** A label selector (`matchLabels` or a Service's `selector`) matches these labels. */
export function selects(selector: unknown, labels: unknown): boolean {
  return (
    isObj(selector) &&
    isObj(labels) &&
    Object.keys(selector).length > 0 &&
    Object.entries(selector).every(([k, v]) => labels[k] === v)
  );
}

/** Names of the services that have a `k8s/base/<name>-deployment.yaml`. */
export function deploymentFileServices(): string[] {
  return readdirSync(k8sBase)
    .map((file) => /^(.+)-deployment\.yaml$/.exec(file)?.[1])
    .filter((name): name is string => Boolean(name))
    .sort();
}

/** Every file under k8s/ (overlays included), relative to the repo, with its text. */
export function k8sFiles(dir = 'k8s'): { file: string; text: string }[] {
  return readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return k8sFiles(relative);
    return entry.isFile() ? [{ file: relative, text: readRepoFile(relative) }] : [];
  });
}

/** Comment text of a YAML file, joined. */
export function yamlComments(text: string): string {
  return text
    .split('\n')
    .filter((line) => line.trimStart().startsWith('#'))
    .join(' ');
}

/** Runs a check body, collecting what it reports; a thrown error (a missing path) is a problem too. */
export function problemsOf(body: (problem: (message: string) => void) => void): string[] {
  const found: string[] = [];
  try {
    body((message) => found.push(message));
  } catch (error) {
    found.push((error as Error).message);
  }
  return found;
}
