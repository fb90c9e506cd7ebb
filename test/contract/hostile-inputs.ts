import { parse as parseQueryString } from 'node:querystring';
import { bulkRow, determinationIngestInput } from '@parametric/contracts';
import type { RouteContract } from '@parametric/http';
import fc from 'fast-check';

/**
 * Hostile requests for the bad-input sweep (test/contract/bad-input-sweep.test.ts): for one
 * route of the OpenAPI document, raw HTTP requests (path, query, headers, body bytes) built
 * around a valid request, each with what the platform must do with it:
 *
 * - `refused`: the input is invalid by construction (the route's own schema refuses it, or one
 *   of the platform's rules for every body and query: malformed JSON, a content type other than
 *   JSON, nesting deeper than 32, a number a double cannot hold exactly, control/bidi characters
 *   or lone surrogates, an id nobody has): a 4xx in the error envelope, nothing written.
 * - `noop`: a read with odd but acceptable input, or a bulk body whose every row is invalid:
 *   any answer but a 5xx, nothing written.
 *
 * Whether a request is invalid is decided here, from the same parse the server does (the
 * `node:querystring` parser express 5 uses, `JSON.parse`, the route's zod schemas): a mutation
 * that happens to stay valid is discarded (`fc.pre`), so nothing valid is ever sent to a route
 * that writes.
 */

// ---------------------------------------------------------------------------------------------
// JSON with everything JSON.stringify cannot write: keys in order (duplicates, `__proto__` as a
// real key), number literals as written, and text that is not JSON at all.

/** Emitted verbatim (a number literal such as `1e309`, or malformed text). */
export class Raw {
  constructor(readonly text: string) {}
}

/** An object as its entries, in order: keys may repeat, `__proto__` is just a key. */
export class Obj {
  constructor(readonly entries: ReadonlyArray<readonly [string, J]>) {}
}

export type J = null | boolean | number | string | Raw | Obj | J[];

export function toJ(value: unknown): J {
  if (
    value === null ||
    typeof value === 'boolean' ||
    typeof value === 'number' ||
    typeof value === 'string'
  ) {
    return value;
  }
  if (value instanceof Raw || value instanceof Obj) return value;
  if (Array.isArray(value)) return value.map(toJ);
  if (typeof value === 'object') {
    return new Obj(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, toJ(v)] as const));
  }
  return null;
}

/** The JSON text of a value (strings through JSON.stringify: lone surrogates become `\ud800`). */
export function jsonText(value: J): string {
  if (value instanceof Raw) return value.text;
  if (value instanceof Obj) {
    return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`;
  }
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (typeof value === 'number' && Object.is(value, -0)) return '-0';
  return JSON.stringify(value);
}

// ---------------------------------------------------------------------------------------------
// Hostile values.

const strings = [
  '',
  ' ',
  'x',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-0',
  '1e308',
  'true',
  '[]',
  '{}',
  "'; DROP TABLE policies; --",
  '{"$gt":""}',
  '$where',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '%00',
  '%ZZ',
  // Unicode that is acceptable text but odd.
  '\u00e9', // é precomposed
  'e\u0301', // é decomposed
  '\ufeffBOM',
  '\u200b\u200c\u200d', // zero-width characters
  '\ud83d\udc04\ud83c\udf3e', // an ox and a sheaf (surrogate pairs)
  'مرحبا',
  '１２３４', // fullwidth digits
  '١٢٣٤', // Arabic-Indic digits
  'ａｄｍｉｎ',
  'x'.repeat(5_000),
  '\u2028\u2029',
  // Text the platform refuses everywhere.
  '\u0000',
  'nul\u0000inside',
  '\u0007bell',
  '\u001b[31m',
  '\u0085',
  '\u202eevil',
  '\u2066isolate\u2069',
  '\ud800',
  '\udfff',
  'x\ud800y',
  '\udc00\ud800',
  // Dates out of range, invalid or in another shape.
  '0000-01-01T00:00:00Z',
  '0000-00-00T00:00:00Z',
  '10000-01-01T00:00:00Z',
  '+010000-01-01T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '275760-09-13T00:00:00.001Z',
  '2026-02-30T00:00:00Z',
  '2026-13-01T00:00:00Z',
  '2026-01-01T24:00:01Z',
  '2026-01-01T00:00:60Z',
  '2026-01-01',
  '2026-01-01T00:00:00+25:00',
  '1970-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  'Mon, 01 Jan 2026 00:00:00 GMT',
  '1767225600000',
  // Money and numbers as strings: more decimals than the currency's exponent, signs, exponents.
  '1000.001',
  '500000.5',
  '1250000.00',
  '-500000',
  '5e5',
  '+100',
  '0.001',
  '-1',
  '1e3',
  '0x10',
  '00012',
  '12345678901234567890123456789',
  '9007199254740993',
  // Ids.
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '3F2B8C1E-7D4A-4E6B-9A1C-2B3D4E5F6A7B',
  '{3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b}',
  '3f2b8c1e7d4a4e6b9a1c2b3d4e5f6a7b',
  '507f1f77bcf86cd799439011',
];

const numbers: J[] = [
  0,
  -0,
  1,
  -1,
  0.5,
  1.5,
  1000.001,
  50_000.123,
  1479.999,
  1000.1234567,
  0.01,
  0.1,
  0.001,
  1e308,
  -1e308,
  5e-324,
  -5e-324,
  2 ** 31,
  2 ** 32 + 1,
  2 ** 53,
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
  // Literals JSON.stringify cannot write: beyond a double, or not exactly one.
  new Raw('1e309'),
  new Raw('-1e309'),
  new Raw('9007199254740993'),
  new Raw('5000.00000000000001'),
  new Raw('1e-400'),
  new Raw('123456789012345678901234567890'),
  new Raw('1.0e2'),
  new Raw('-0.0'),
  new Raw('1E+2'),
];

const operators: J[] = [
  { $gt: '' },
  { $ne: null },
  { $gt: -1 },
  { $regex: '.*' },
  { $where: 'sleep(1000)' },
  { $in: ['', null] },
  { $exists: true },
  { $expr: { $eq: [1, 1] } },
  { $set: { status: 'ACTIVE' } },
  { $function: { body: 'return true', args: [], lang: 'js' } },
].map(toJ);

const prototypeJunk: J[] = [
  new Obj([['__proto__', toJ({ admin: true, status: 'ACTIVE' })]]),
  new Obj([['constructor', toJ({ prototype: { admin: true } })]]),
  new Obj([['prototype', toJ({ admin: true })]]),
];

/** Any value that is hostile somewhere: wrong types, bounds, formats, operators, prototypes. */
export const hostileValue: fc.Arbitrary<J> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<J>(...strings) },
  { weight: 3, arbitrary: fc.constantFrom<J>(...numbers) },
  { weight: 2, arbitrary: fc.constantFrom<J>(null, true, false, [], new Obj([]), [1, 2], ['x']) },
  { weight: 2, arbitrary: fc.constantFrom<J>(...operators) },
  { weight: 1, arbitrary: fc.constantFrom<J>(...prototypeJunk) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.integer() },
  {
    weight: 1,
    arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map(toJ) },
);

/** Keys that must never be accepted as fields, or that trick naive merges and queries. */
const hostileKeys = [
  '__proto__',
  'constructor',
  'prototype',
  '$where',
  '$set',
  '$gt',
  'a.b',
  '',
  'id',
  '_id',
  'organizationId',
  'status',
  'unknownField',
  '\u0000',
  '\u202e',
  'x'.repeat(300),
];

// ---------------------------------------------------------------------------------------------
// Mutations of a valid body.

type Path = ReadonlyArray<string | number>;

/** Every path of a JSON value (objects and arrays inside it), the root excluded. */
export function pathsOf(value: unknown, at: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [];
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value as Record<string, unknown>);
  return entries.flatMap(([k, v]) => [[...at, k], ...pathsOf(v, [...at, k])]);
}

/** Paths of the objects inside a value, the root included. */
function objectPathsOf(value: unknown): Path[] {
  const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
  const all: Path[] = [[], ...pathsOf(value)];
  return all.filter((p) => isObject(valueAt(value, p)));
}

function valueAt(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)?.[k], value);
}

/** `edit` applied at `path` of a J value: it gets the entries (object) or items (array) there. */
function editAt(value: J, path: Path, edit: (inner: J) => J): J {
  if (path.length === 0) return edit(value);
  const [head, ...rest] = path;
  if (value instanceof Obj) {
    return new Obj(value.entries.map(([k, v]) => (k === head ? [k, editAt(v, rest, edit)] : [k, v])));
  }
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? editAt(v, rest, edit) : v));
  return value;
}

function setAt(value: J, path: Path, next: J | undefined): J {
  if (path.length === 0) return next === undefined ? new Obj([]) : next;
  const parent = path.slice(0, -1);
  const last = path[path.length - 1];
  return editAt(value, parent, (inner) => {
    if (inner instanceof Obj) {
      return new Obj(
        next === undefined
          ? inner.entries.filter(([k]) => k !== last)
          : inner.entries.map(([k, v]) => (k === last ? [k, next] : [k, v])),
      );
    }
    if (Array.isArray(inner)) {
      return next === undefined
        ? inner.filter((_, i) => i !== last)
        : inner.map((v, i) => (i === last ? next : v));
    }
    return inner;
  });
}

function addKey(value: J, path: Path, key: string, added: J, first = false): J {
  return editAt(value, path, (inner) =>
    inner instanceof Obj
      ? new Obj(first ? [[key, added], ...inner.entries] : [...inner.entries, [key, added]])
      : inner,
  );
}

/** What was done to the body (shown in a failure), and the body. */
export interface BodyCase {
  label: string;
  body: Buffer | string | undefined;
  contentType?: string;
  contentEncoding?: string;
}

const json = (label: string, value: J): BodyCase => ({ label, body: jsonText(value) });

/** Bodies around a valid one: every kind of damage, in JSON or not. */
export function hostileBodies(valid: unknown): fc.Arbitrary<BodyCase> {
  const base = toJ(valid);
  const paths = pathsOf(valid);
  const objects = objectPathsOf(valid);
  const show = (p: Path) => (p.length ? p.join('.') : '(root)');
  const text = jsonText(base);
  const pathArb = paths.length ? fc.constantFrom(...paths) : fc.constant<Path>([]);
  const objectArb = fc.constantFrom(...(objects.length ? objects : [[] as Path]));
  return fc.oneof(
    // A field with a hostile value (wrong type, bounds, format, operator, prototype, unicode).
    {
      weight: 8,
      arbitrary: fc
        .tuple(pathArb, hostileValue)
        .map(([p, v]) => json(`${show(p)} := ${jsonText(v).slice(0, 200)}`, setAt(base, p, v))),
    },
    // A field missing.
    { weight: 2, arbitrary: pathArb.map((p) => json(`without ${show(p)}`, setAt(base, p, undefined))) },
    // An unknown or dangerous key (raw JSON: `__proto__` is a real key).
    {
      weight: 3,
      arbitrary: fc
        .tuple(objectArb, fc.constantFrom(...hostileKeys), hostileValue, fc.boolean())
        .map(([p, k, v, first]) =>
          json(
            `${show(p)} + ${JSON.stringify(k).slice(0, 40)}: ${jsonText(v).slice(0, 100)}`,
            addKey(base, p, k, v, first),
          ),
        ),
    },
    // The same key twice: the valid value, then a hostile one (JSON.parse keeps the last).
    {
      weight: 2,
      arbitrary: fc.tuple(objectArb, hostileValue).chain(([p, v]) => {
        const keys = (
          valueAt(valid, p) && typeof valueAt(valid, p) === 'object'
            ? Object.keys(valueAt(valid, p) as object)
            : []
        ) as string[];
        if (!keys.length) return fc.constant(json('duplicate key in an empty object', base));
        return fc
          .constantFrom(...keys)
          .map((k) =>
            json(`${show([...p, k])} twice, last ${jsonText(v).slice(0, 100)}`, addKey(base, p, k, v)),
          );
      }),
    },
    // The whole body replaced: an array, a primitive, operators, the body wrapped.
    {
      weight: 2,
      arbitrary: fc.constantFrom<BodyCase>(
        json('an array of the body', [base]),
        json('an empty array', []),
        json('an empty object', new Obj([])),
        json('null', null),
        json('a string', 'body'),
        json('a number', 1),
        json('true', true),
        json('the body wrapped', new Obj([['data', base]])),
        json('operators', toJ({ $gt: '' })),
        json('__proto__ only', new Obj([['__proto__', base]])),
      ),
    },
    // Not JSON, or JSON the platform refuses before any route sees it.
    {
      weight: 3,
      arbitrary: fc.constantFrom<BodyCase>(
        { label: 'truncated', body: text.slice(0, Math.max(1, text.length - 3)) },
        { label: 'trailing comma', body: `${text.slice(0, -1)},}` },
        { label: 'single quotes', body: text.replaceAll('"', "'") },
        { label: 'NaN literal', body: `${text.slice(0, -1)},"n":NaN}` },
        { label: 'comment', body: `/* hi */${text}` },
        { label: 'two documents', body: `${text}${text}` },
        { label: 'raw control character in a string', body: `{"a":"x\u0001y"}` },
        { label: 'unterminated string', body: '{"a":"' },
        { label: 'nested 40 deep', body: `${'['.repeat(40)}${']'.repeat(40)}` },
        { label: 'objects nested 40 deep', body: `${'{"a":'.repeat(40)}1${'}'.repeat(40)}` },
        {
          label: 'invalid UTF-8',
          body: Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')]),
        },
        {
          label: 'overlong UTF-8 NUL',
          body: Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc0, 0x80]), Buffer.from('"}')]),
        },
        { label: 'UTF-16LE', body: Buffer.from(text, 'utf16le') },
        { label: 'inexact number', body: `${text.slice(0, -1)},"n":9007199254740993}` },
        { label: 'over 1 MiB', body: `{"a":"${'x'.repeat(1_100_000)}"}` },
        { label: 'huge exponent', body: `${text.slice(0, -1)},"n":1e999999}` },
        { label: 'lone surrogate key', body: `${text.slice(0, -1)},"\\ud800":1}` },
        { label: 'NUL escape', body: `${text.slice(0, -1)},"n":"\\u0000"}` },
        { label: 'bidi override', body: `${text.slice(0, -1)},"n":"\\u202e"}` },
        { label: 'empty text', body: '' },
        { label: 'whitespace only', body: '   ' },
        { label: 'JSON as text/plain', body: text, contentType: 'text/plain' },
        { label: 'JSON as a form', body: text, contentType: 'application/x-www-form-urlencoded' },
        { label: 'JSON as multipart', body: text, contentType: 'multipart/form-data; boundary=x' },
        { label: 'JSON in UTF-16', body: text, contentType: 'application/json; charset=utf-16' },
        { label: 'JSON in latin1', body: text, contentType: 'application/json; charset=latin1' },
        { label: 'JSON without a content type', body: text, contentType: '' },
        { label: 'JSON said to be gzip', body: text, contentEncoding: 'gzip' },
        { label: 'JSON said to be brotli', body: text, contentEncoding: 'br' },
        { label: 'JSON in an unknown encoding', body: text, contentEncoding: 'zstd-ish' },
      ),
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Path parameters and query strings.

/** Path segments as sent (already encoded where they need to be). */
export const hostileSegments = fc.oneof(
  fc.constantFrom(
    'not-a-uuid',
    '0',
    '-1',
    '1e308',
    'null',
    'undefined',
    '__proto__',
    'constructor',
    '%24gt',
    '%7B%22%24gt%22%3A%22%22%7D',
    '%00',
    '%ZZ',
    '%',
    '%E0%A4%A',
    '%ED%A0%80', // a surrogate in UTF-8
    '%C0%80',
    '%E2%80%AE',
    '..',
    '.',
    '%2e%2e',
    '..%2f..%2fetc',
    'a%2Fb',
    '3F2B8C1E-7D4A-4E6B-9A1C-2B3D4E5F6A7B',
    '%7B3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b%7D',
    '3f2b8c1e7d4a4e6b9a1c2b3d4e5f6a7b',
    '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7',
    '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7bb',
    '507f1f77bcf86cd799439011',
    'x'.repeat(4_000),
    encodeURIComponent('١٢٣'),
    encodeURIComponent('\ud83d\udc04'),
  ),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).map(encodeURIComponent),
);

/** Query strings (without `?`), as sent. */
export function hostileQueries(keys: readonly string[]): fc.Arbitrary<string> {
  const key = fc.constantFrom(
    ...keys,
    'unknown',
    '__proto__',
    'constructor',
    '$where',
    'page[$gt]',
    'a[b]',
    '',
  );
  const value = fc.oneof(
    fc.constantFrom(
      '',
      '0',
      '-0',
      '-1',
      '1.5',
      '1e308',
      '1e309',
      '9007199254740993',
      '0x10',
      'NaN',
      'Infinity',
      'true',
      'null',
      'ACTIVE',
      'active',
      'x'.repeat(3_000),
      '%00',
      '%ZZ',
      '%E2%80%AE',
      '%ED%A0%80',
      '%24gt',
      '00000000-0000-0000-0000-000000000000',
      'not-a-uuid',
      '%EF%BC%91', // fullwidth 1
    ),
    fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeURIComponent),
  );
  const pair = fc.tuple(key, value).map(([k, v]) => `${encodeURIComponent(k)}=${v}`);
  return fc.oneof(
    fc.array(pair, { minLength: 1, maxLength: 4 }).map((p) => p.join('&')),
    // The same parameter twice (`page=1&page=2`), with a good value and a bad one.
    fc
      .tuple(key, value, value)
      .map(([k, a, b]) => `${encodeURIComponent(k)}=${a}&${encodeURIComponent(k)}=${b}`),
    fc.constantFrom('page=1&page=2', 'limit=10&limit=10', 'page[]=1', 'page[0]=1', '&&&', '=', '?', '%'),
  );
}

// ---------------------------------------------------------------------------------------------
// What the platform must make of a request.

/** Characters the platform refuses in any string of a body or query (libs/http/src/app.ts). */
const UNSAFE_TEXT =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u;

function hasUnsafeText(value: unknown): boolean {
  if (typeof value === 'string') return UNSAFE_TEXT.test(value);
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([k, v]) => UNSAFE_TEXT.test(k) || hasUnsafeText(v));
}

/** Whether the JSON text has a number literal that is not exactly the double it parses to. */
function hasInexactNumber(text: string): boolean {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      const literal = /^[-0-9.eE+]+/.exec(text.slice(i))?.[0] ?? c;
      const value = Number(literal);
      if (!Number.isFinite(value) || canonical(literal) !== canonical(String(value))) return true;
      i += literal.length - 1;
    }
  }
  return false;
}

function canonical(literal: string): string {
  const match = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!match) return literal;
  const [, sign = '', whole = '', fraction = '', power = '0'] = match;
  let digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits === '') return '0';
  let scale = Number(power) - fraction.length;
  while (digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    scale += 1;
  }
  return `${sign}${digits}e${scale}`;
}

function depthOf(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') max = Math.max(max, ++depth);
    else if (c === ']' || c === '}') depth--;
  }
  return max;
}

export type Verdict = { expect: 'refused' | 'noop'; why: string } | { expect: 'valid'; why: string };

/** Routes whose body is a list validated item by item: every item must be invalid. */
const ITEM_SCHEMAS: Record<
  string,
  { field: string; schema: { safeParse(v: unknown): { success: boolean } } }
> = {
  bulkImportFarmers: { field: 'farmers', schema: bulkRow },
  opsIngestDeterminationBatch: { field: 'items', schema: determinationIngestInput },
};

/** The body's verdict, as the platform (gateway, then the service) must reach it. */
export function judgeBody(route: RouteContract, c: BodyCase, maxBodyBytes = 1024 * 1024): Verdict {
  const writes = route.method !== 'get';
  if (c.body === undefined) {
    if (!route.body || route.bodyOptional) return { expect: 'valid', why: 'no body' };
    return { expect: 'refused', why: 'body required' };
  }
  const bytes = typeof c.body === 'string' ? Buffer.from(c.body) : c.body;
  if (bytes.length === 0) {
    if (!route.body || route.bodyOptional) return { expect: 'valid', why: 'empty body' };
    return { expect: 'refused', why: 'body required' };
  }
  if (c.contentType !== undefined && !/^application\/json(;|$)/.test(c.contentType)) {
    // POST, PUT and PATCH refuse it; GET and DELETE leave a body that is not JSON unread.
    if (['post', 'put', 'patch'].includes(route.method))
      return { expect: 'refused', why: 'not application/json' };
    return { expect: writes ? 'valid' : 'noop', why: 'a body that is not JSON is not read' };
  }
  if (c.contentType !== undefined && /charset=(?!utf-8)/i.test(c.contentType)) {
    return { expect: 'refused', why: 'not UTF-8' };
  }
  if (c.contentEncoding !== undefined) return { expect: 'refused', why: 'not the encoding it says' };
  if (bytes.length > maxBodyBytes) return { expect: 'refused', why: 'over the body limit' };
  const text = new TextDecoder('utf-8', { ignoreBOM: false }).decode(bytes);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { expect: 'refused', why: 'malformed JSON' };
  }
  if (parsed === null || typeof parsed !== 'object')
    return { expect: 'refused', why: 'not an object or array' };
  if (depthOf(text) > 32) return { expect: 'refused', why: 'too deep' };
  if (hasInexactNumber(text)) return { expect: 'refused', why: 'inexact number' };
  if (hasUnsafeText(parsed)) return { expect: 'refused', why: 'unsafe text' };
  if (!route.body) return { expect: writes ? 'valid' : 'noop', why: 'route takes no body' };
  const result = route.body.safeParse(parsed);
  if (!result.success) return { expect: 'refused', why: `schema: ${result.error.issues[0]?.message}` };
  const items = ITEM_SCHEMAS[route.operationId];
  if (items) {
    const list = (parsed as Record<string, unknown[]>)[items.field] ?? [];
    if (list.every((item) => !items.schema.safeParse(item).success)) {
      return { expect: 'noop', why: 'every item invalid' };
    }
  }
  return { expect: 'valid', why: 'valid body' };
}

/** The query's verdict: express 5 parses it with node:querystring. */
export function judgeQuery(route: RouteContract, query: string): Verdict {
  if (query === '') return { expect: 'valid', why: 'no query' };
  let parsed: Record<string, unknown>;
  try {
    parsed = { ...parseQueryString(query) };
  } catch {
    return { expect: 'refused', why: 'malformed query' };
  }
  if (hasUnsafeText(parsed)) return { expect: 'refused', why: 'unsafe text in the query' };
  if (route.ignoresQuery) return { expect: 'valid', why: 'a document ignores its query' };
  // Only the parameters the route declares, each once (libs/http/src/validation.ts).
  const names = route.query ? Object.keys(route.query.shape) : [];
  const unknown = Object.keys(parsed).find((name) => !names.includes(name));
  if (unknown !== undefined) return { expect: 'refused', why: `unknown query parameter ${unknown}` };
  const repeated = Object.keys(parsed).find((name) => Array.isArray(parsed[name]));
  if (repeated !== undefined) return { expect: 'refused', why: `query parameter ${repeated} given twice` };
  if (!route.query) return { expect: 'valid', why: 'no query' };
  const result = route.query.safeParse(parsed);
  if (!result.success) return { expect: 'refused', why: `query: ${result.error.issues[0]?.message}` };
  return { expect: 'valid', why: 'valid query' };
}
