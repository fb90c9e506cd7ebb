import { Binary, Decimal128, type Document, Long, ObjectId, serialize } from 'bson';
import { deepFreeze } from '../src/store/values';
import { BSON_WRITE_OPTIONS, documentBytes, encodeCursorReply } from '../src/wire/encoded';

/**
 * Cursor replies are assembled around documents already in BSON; the bytes must be exactly
 * what encoding the whole reply document gives, or a driver would read something else.
 */
describe('encodeCursorReply', () => {
  const docs: Document[] = [
    { _id: new ObjectId(), name: 'Wanjiru', acres: 2.5, tags: ['maize', 'beans'] },
    { _id: 2, nested: { deep: { list: [1, { x: null }] } }, missing: undefined },
    { _id: 'x', n: Long.fromString('9007199254740993'), d: Decimal128.fromString('1.10') },
    { _id: 4, when: new Date(Date.UTC(2026, 0, 1)), bytes: new Binary(Buffer.from('abc')), ü: 'ünïcödé ✓' },
  ];

  it.each([
    ['firstBatch', docs, Long.ZERO, 'db.farmers'],
    ['nextBatch', docs.slice(1), Long.fromString('7215397316239237482'), 'mañana.cosechas'],
    ['firstBatch', [], Long.ZERO, 'db.$cmd.aggregate'],
    // Index keys of two digits and more.
    ['nextBatch', Array.from({ length: 120 }, (_, i) => ({ _id: i })), Long.fromNumber(12345), 'db.c'],
  ] as const)('matches serialize for a %s of %#', (batchKey, batch, id, ns) => {
    const encoded = encodeCursorReply(
      batchKey,
      batch.map((doc) => documentBytes(doc)),
      id,
      ns,
    );
    const expected = serialize({ cursor: { [batchKey]: batch, id, ns }, ok: 1 }, BSON_WRITE_OPTIONS);
    expect(Buffer.from(encoded.bytes).equals(Buffer.from(expected))).toBe(true);
  });
});

describe('documentBytes', () => {
  it('encodes a stored (frozen) document once and hands out the same bytes after', () => {
    const doc = deepFreeze({ _id: 1, name: 'stored' });
    const first = documentBytes(doc);
    expect(documentBytes(doc)).toBe(first);
    expect(Buffer.from(first).equals(Buffer.from(serialize(doc)))).toBe(true);
  });

  it('encodes a document that may still change (a projection result) afresh each time', () => {
    const doc: Document = { _id: 1, name: 'before' };
    const before = documentBytes(doc);
    doc.name = 'after';
    expect(documentBytes(doc)).not.toBe(before);
    expect(Buffer.from(documentBytes(doc)).equals(Buffer.from(serialize(doc)))).toBe(true);
  });
});
