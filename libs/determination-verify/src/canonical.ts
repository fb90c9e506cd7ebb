import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * A value RFC 8785 (JCS) cannot represent, with where it sits (`$.amountOwed.amount`).
 *
 * The `canonicalize` package serialises; this module first walks the value and refuses what
 * JCS has no form for, because the package (2.x) would otherwise pass some of it through:
 * lone surrogates (it escapes them; JCS requires well-formed Unicode), `undefined` members and
 * functions (dropped silently: MongoDB would store `undefined` as `null`, so a hash taken
 * before storing would not match the stored value), `Date` and other class instances
 * (serialised through `toJSON`, a representation nobody chose), cycles and sparse arrays.
 */
export class CanonicalizationError extends Error {
  override readonly name = 'CanonicalizationError';
  constructor(
    /** Where in the value: `$` is the value itself. */
    readonly path: string,
    readonly problem: string,
  ) {
    super(`cannot write ${path} as RFC 8785 canonical JSON: ${problem}`);
  }
}

/** In a `u` regex a surrogate pair is one code point, so this finds only lone surrogates. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function memberPath(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function describe(value: object): string {
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? `a ${name}` : 'an object with a prototype';
}

function assertJson(value: unknown, path: string, ancestors: Set<object>): void {
  switch (typeof value) {
    case 'string':
      if (LONE_SURROGATE.test(value)) {
        throw new CanonicalizationError(
          path,
          'the string contains a lone surrogate (not well-formed Unicode)',
        );
      }
      return;
    case 'number':
      if (!Number.isFinite(value)) {
        throw new CanonicalizationError(
          path,
          `${value} is not a finite number (JSON has no NaN or Infinity)`,
        );
      }
      return;
    case 'boolean':
      return;
    case 'undefined':
      throw new CanonicalizationError(path, 'undefined has no JSON form (leave the member out instead)');
    case 'bigint':
      throw new CanonicalizationError(path, 'a bigint has no JSON form here (carry it as a decimal string)');
    case 'object':
      break;
    default:
      throw new CanonicalizationError(path, `a ${typeof value} has no JSON form`);
  }
  if (value === null) return;
  if (ancestors.has(value)) throw new CanonicalizationError(path, 'the value contains itself (a cycle)');
  ancestors.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) throw new CanonicalizationError(`${path}[${i}]`, 'the array has a hole here');
      assertJson(value[i], `${path}[${i}]`, ancestors);
    }
  } else {
    // Plain objects only (from any realm): their prototype is Object.prototype or null.
    const proto = Object.getPrototypeOf(value);
    if (proto !== null && Object.getPrototypeOf(proto) !== null) {
      throw new CanonicalizationError(path, `${describe(value)} is not a plain JSON object`);
    }
    for (const key of Object.keys(value)) {
      if (LONE_SURROGATE.test(key)) {
        throw new CanonicalizationError(memberPath(path, key), 'the member name contains a lone surrogate');
      }
      assertJson((value as Record<string, unknown>)[key], memberPath(path, key), ancestors);
    }
  }
  ancestors.delete(value);
}

/**
 * The RFC 8785 (JCS) canonical JSON text of a JSON value: members sorted by UTF-16 code
 * units, no whitespace, ECMAScript number serialisation, minimal string escapes. No Unicode
 * normalisation happens: equal-looking strings in different normal forms give different text.
 * Throws `CanonicalizationError` for anything JSON cannot carry exactly (see the class).
 */
export function canonicalJson(value: unknown): string {
  assertJson(value, '$', new Set());
  const text = canonicalize(value);
  if (typeof text !== 'string') throw new CanonicalizationError('$', 'the value has no JSON form');
  return text;
}

/** The UTF-8 bytes of `canonicalJson(value)`: what a determination's signature covers. */
export function canonicalBytes(value: unknown): Uint8Array {
  return Buffer.from(canonicalJson(value), 'utf8');
}

/** Lowercase hex SHA-256. A string is hashed as its UTF-8 bytes. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256')
    .update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data)
    .digest('hex');
}

/**
 * `evidenceHash` of a determination: lowercase hex SHA-256 of the canonical JSON of the
 * evidence object (`data.evidence` of `GET /api/determinations/{id}/evidence`).
 */
export function evidenceHash(evidence: object): string {
  if (evidence === null || typeof evidence !== 'object' || Array.isArray(evidence)) {
    throw new CanonicalizationError('$', 'the evidence must be a JSON object');
  }
  return sha256Hex(canonicalBytes(evidence));
}
