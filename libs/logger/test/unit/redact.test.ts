import { CENSOR, createLogger, SECRET_FIELDS, SECRET_HEADERS } from '@parametric/logger';
import { captureLogs } from '@parametric/test-harness';
import fc from 'fast-check';
import pino from 'pino';

/**
 * The redaction this logger had before it walked objects itself: pino's `redact` with these paths.
 * It is the oracle of the property below: whatever it hid stays hidden.
 */
const PINO_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers["x-internal-signature"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers["x-api-key"]',
  'headers.authorization',
  ...[...SECRET_FIELDS].flatMap((f) => [f, `*.${f}`, `*.*.${f}`, `*.*.*.${f}`]),
];

function logOnce(logger: (destination: pino.DestinationStream) => pino.Logger, value: object) {
  const logs = captureLogs();
  logger(logs.destination as pino.DestinationStream).info(value, 'line');
  const [record] = logs.records();
  return record as Record<string, unknown>;
}

const ours = (destination: pino.DestinationStream) => createLogger({ name: 'svc', destination });
const before = (destination: pino.DestinationStream) =>
  pino({ base: { service: 'svc' }, redact: { paths: PINO_PATHS, censor: CENSOR } }, destination);

function pick(record: Record<string, unknown>, logged: object) {
  return Object.fromEntries(Object.keys(logged).map((key) => [key, record[key]]));
}

/** The value at `path` of a parsed line, or the path at which it was hidden on the way there. */
function find(record: unknown, path: string[]): { value?: unknown; hiddenAt?: string[] } {
  let here = record;
  for (let i = 0; i < path.length; i++) {
    if (here === CENSOR) return { hiddenAt: path.slice(0, i) };
    here = (here as Record<string, unknown> | undefined)?.[path[i] as string];
  }
  return here === CENSOR ? { hiddenAt: path } : { value: here };
}

/** Every leaf of a parsed line by its path. */
function leaves(
  value: unknown,
  path: string[] = [],
  into = new Map<string, { path: string[]; value: unknown }>(),
) {
  if (typeof value === 'object' && value !== null && Object.keys(value).length > 0) {
    for (const [key, inner] of Object.entries(value)) leaves(inner, [...path, key], into);
  } else {
    into.set(JSON.stringify(path), { path, value });
  }
  return into;
}

const SECRET = 'sk_live_do_not_log_me';
const names = fc.constantFrom(
  ...SECRET_FIELDS,
  ...SECRET_HEADERS,
  'headers',
  'req',
  'res',
  'partner',
  'body',
  'items',
  'id',
  'url',
);
/** Objects up to five levels deep whose keys are often secret names, with arrays among them. */
const logged = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(SECRET),
    fc.integer(),
    fc.array(tie('node'), { maxLength: 3 }),
    fc.dictionary(names, tie('node'), { maxKeys: 4 }),
  ),
}));

describe('redaction by one walk of the logged object', () => {
  it('hides whatever pino’s redaction paths hid, beyond that only secret headers, and changes nothing else', () => {
    fc.assert(
      fc.property(fc.dictionary(names, logged.node, { maxKeys: 5 }), (value) => {
        const snapshot = structuredClone(value);
        // Only what was logged: the lines' own fields (time, name, level) differ between the two.
        const now = pick(logOnce(ours, value), value);
        // The logged object itself is left as it was.
        expect(value).toEqual(snapshot);
        const then = leaves(pick(logOnce(before, structuredClone(value)), value));
        for (const { path, value: old } of then.values()) {
          const fresh = find(now, path);
          if (old === CENSOR) expect(fresh.hiddenAt).toBeDefined();
          else if (fresh.hiddenAt) {
            // Hidden now and not before: only under a secret name (a secret header of an object
            // logged as `headers`, or a secret field the paths did not reach).
            const [parent, key] = fresh.hiddenAt.slice(-2);
            expect(
              SECRET_FIELDS.has(key as string) || (parent === 'headers' && SECRET_HEADERS.has(key as string)),
            ).toBe(true);
          } else expect(fresh.value).toEqual(old);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('hides a secret three levels below the top, and inside arrays', () => {
    const record = logOnce(ours, {
      outer: { middle: { inner: { token: SECRET, kept: 1 } } },
      partners: [{ apiKey: SECRET, name: 'Acme' }],
    });
    expect(record.outer).toEqual({ middle: { inner: { token: CENSOR, kept: 1 } } });
    expect(record.partners).toEqual([{ apiKey: CENSOR, name: 'Acme' }]);
    expect(JSON.stringify(record)).not.toContain(SECRET);
  });

  it('hides secret headers in any object logged as headers, a call’s own included', () => {
    const record = logOnce(ours, {
      call: { headers: { authorization: `Bearer ${SECRET}`, 'x-internal-signature': SECRET, accept: '*/*' } },
    });
    expect(record.call).toEqual({
      headers: { authorization: CENSOR, 'x-internal-signature': CENSOR, accept: '*/*' },
    });
  });

  it('logs an error with a secret property as an error: type, message and stack kept, the secret hidden', () => {
    const err = Object.assign(new TypeError('the partner refused'), { token: SECRET, status: 401 });
    const record = logOnce(ours, { err });
    expect(record.err).toMatchObject({
      type: 'TypeError',
      message: 'the partner refused',
      token: CENSOR,
      status: 401,
    });
    expect(String((record.err as { stack: string }).stack)).toContain('the partner refused');
    expect(err.token).toBe(SECRET);
  });

  it('logs a buffer and a date as their JSON, whatever properties they carry', () => {
    // Their JSON is their bytes and their time: a copy made to hide a field would be neither.
    const file = Object.assign(Buffer.from('abc'), { secret: SECRET });
    const at = Object.assign(new Date('2026-11-29T10:00:00.000Z'), { token: SECRET });
    const record = logOnce(ours, { upload: { file, at, apiKey: SECRET } });
    expect(record.upload).toEqual({
      file: { type: 'Buffer', data: [97, 98, 99] },
      at: '2026-11-29T10:00:00.000Z',
      apiKey: CENSOR,
    });
    expect(JSON.stringify(record)).not.toContain(SECRET);
  });

  it('hides a secret in a frozen object without throwing, and leaves the object frozen as it was', () => {
    const config = Object.freeze({ webhookSecret: SECRET, url: 'https://partner.example/hook' });
    const record = logOnce(ours, { config });
    expect(record.config).toEqual({ webhookSecret: CENSOR, url: 'https://partner.example/hook' });
    expect(config.webhookSecret).toBe(SECRET);
  });
});
