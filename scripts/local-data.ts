import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/**
 * `npm start`'s data directory (`--data-dir <dir>` or `DATA_DIR`): where the embedded MongoDB,
 * the private Redis and the private chain keep their data, and where the secrets this script
 * generates are kept (`secrets.json`, readable by its owner only) so that what an earlier run
 * issued still works after a restart: API keys (the pepper), webhook secrets (their
 * encryption key), signed determinations (the signing key), dashboard sign-ins, the ops token
 * and the demo organization's key.
 */
export function dataDirOf(argv: string[], env: NodeJS.ProcessEnv): string | undefined {
  let chosen = env.DATA_DIR || undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--data-dir') {
      const value = argv[i + 1];
      if (!value || value.startsWith('--')) throw new Error('--data-dir needs a directory');
      chosen = value;
      i++;
    } else if (arg.startsWith('--data-dir=')) {
      chosen = arg.slice('--data-dir='.length);
      if (!chosen) throw new Error('--data-dir needs a directory');
    } else {
      throw new Error(`unknown argument ${arg} (npm start accepts --data-dir <dir>)`);
    }
  }
  return chosen ? path.resolve(chosen) : undefined;
}

const Stored = z.record(z.string(), z.string());

/** The secrets kept in a data directory: what one run generates, the next one reads back. */
export class KeptSecrets {
  private readonly file: string;
  private readonly values: Record<string, string>;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = path.join(dir, 'secrets.json');
    this.values = existsSync(this.file) ? KeptSecrets.read(this.file) : {};
  }

  private static read(file: string): Record<string, string> {
    const parsed = Stored.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    if (!parsed.success)
      throw new Error(`${file} is not what npm start writes: move it away to start afresh`);
    return parsed.data;
  }

  get(name: string): string | undefined {
    return this.values[name];
  }

  /** The kept value of `name`, else `make()`'s, kept for the next run. */
  keep(name: string, make: () => string): string {
    const kept = this.values[name];
    if (kept !== undefined) return kept;
    const value = make();
    this.set(name, value);
    return value;
  }

  set(name: string, value: string): void {
    this.values[name] = value;
    // Written whole and renamed into place: a kill mid-write leaves the previous file.
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(this.values, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, this.file);
  }
}
