/**
 * What never reaches a log line: API keys, secrets and signatures, wherever they appear in a
 * logged object (request headers, bodies, config, a child logger's bindings).
 *
 * One walk of the logged object instead of pino's `redact` paths: pino ran each top-level field
 * of every line (and its message) through a redactor that parsed each of its 83 paths again
 * on every call, over twenty times the CPU of the rest of the line (docs/performance.md, "Log lines
 * without pino's redaction paths"). The walk reads each field once, copies only the objects on
 * the way to a secret, and leaves the logged object as it was.
 */

/** Field names whose values are secret at the top level and three levels below it. */
export const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'apiKey',
  'apiSecret',
  'secret',
  'webhookSecret',
  'password',
  'token',
  'keyHash',
  'secretHash',
  // The chain registry owner's key, and RPC URLs (hosted providers embed an API key in them).
  'privateKey',
  'CHAIN_PRIVATE_KEY',
  'CHAIN_RPC_URL',
  // Ed25519 keys that sign determinations and dashboard tokens (PKCS#8 PEM bundles).
  'DETERMINATION_SIGNING_KEYS',
  'DASHBOARD_TOKEN_KEYS',
  // Dashboard sign-in: passwords, the tokens it hands out, their stored hashes.
  'adminPassword',
  'passwordHash',
  'accessToken',
  'refreshToken',
  'invitationToken',
  'invitationHash',
]);

/**
 * Header names (lower case, as Node gives them) whose values are secret in any object logged
 * under a `headers` field: a request's, a response's or a call's own.
 */
export const SECRET_HEADERS: ReadonlySet<string> = new Set([
  'x-api-key',
  'authorization',
  'x-internal-signature',
  'cookie',
  'set-cookie',
]);

export const CENSOR = '[Redacted]';

/** The top level is 1: a field at depth 4 is `a.b.c.field`. Deeper objects are logged as they are. */
const MAX_DEPTH = 4;

/**
 * `value` with every secret replaced by `[Redacted]`: the same object when it holds none (no
 * copy), else a copy of each object on the way to one. Arrays are walked like objects; a copied
 * object keeps its prototype and its non-enumerable properties (an `Error`'s message and stack),
 * so pino's serializers see what they would have.
 */
export function redacted<T>(value: T): T {
  return isWalked(value) ? (walk(value, 1, false) as T) : value;
}

function walk(object: object, depth: number, isHeaders: boolean): object {
  let copy: Record<string, unknown> | undefined;
  if (Array.isArray(object)) {
    // Items count as one level deeper, as the paths' wildcards took indexes for keys.
    if (depth >= MAX_DEPTH) return object;
    for (let i = 0; i < object.length; i++) {
      const item: unknown = object[i];
      if (!isWalked(item)) continue;
      const next = walk(item, depth + 1, false);
      if (next !== item) {
        copy ??= object.slice() as unknown as Record<string, unknown>;
        copy[i] = next;
      }
    }
    return copy ?? object;
  }
  const fields = object as Record<string, unknown>;
  for (const key in fields) {
    if (!Object.hasOwn(fields, key)) continue;
    const value = fields[key];
    let next = value;
    if (SECRET_FIELDS.has(key) || (isHeaders && SECRET_HEADERS.has(key.toLowerCase()))) next = CENSOR;
    else if (depth < MAX_DEPTH && isWalked(value)) next = walk(value, depth + 1, key === 'headers');
    if (next !== value) {
      copy ??= copyOf(fields);
      // Defined, not assigned: a copied property may be read-only (a frozen object's).
      Object.defineProperty(copy, key, { value: next, enumerable: true, writable: true, configurable: true });
    }
  }
  return copy ?? object;
}

/**
 * Objects whose fields are walked. Not a buffer, typed array or date: their JSON is their bytes
 * or their time, which a copy would not have (and a buffer's bytes would each be a field).
 */
function isWalked(value: unknown): value is object {
  return (
    typeof value === 'object' && value !== null && !ArrayBuffer.isView(value) && !(value instanceof Date)
  );
}

function copyOf(object: Record<string, unknown>): Record<string, unknown> {
  const prototype = Object.getPrototypeOf(object) as object | null;
  if (prototype === Object.prototype || prototype === null) return { ...object };
  const descriptors = Object.getOwnPropertyDescriptors(object);
  for (const [key, descriptor] of Object.entries(descriptors)) {
    // An accessor may read its holder's internals (an error's `stack` does): the copy gets the
    // value it reads now.
    if (descriptor.get || descriptor.set)
      descriptors[key] = { value: object[key], enumerable: descriptor.enumerable, writable: true };
    // A frozen object's properties could not be replaced in the copy.
    (descriptors[key] as PropertyDescriptor).configurable = true;
  }
  return Object.create(prototype, descriptors) as Record<string, unknown>;
}
