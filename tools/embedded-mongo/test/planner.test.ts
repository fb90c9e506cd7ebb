import { Decimal128, Long, ObjectId } from 'bson';
import fc from 'fast-check';
import { MINGO_COMPILED, Query } from '../src/mingo/context';
import { runFind, selectDocs } from '../src/query';
import { Collection } from '../src/store/collection';
import type { Doc } from '../src/store/values';

/**
 * The planner may only narrow which documents a query tests, never change its answer: for
 * any documents, indexes and filter, the indexed collection returns exactly what a
 * collection without indexes returns, in the same order.
 */

const OID = Array.from({ length: 4 }, (_, i) => new ObjectId(`65f0000000000000000000a${i}`));
const DAY = Date.UTC(2026, 0, 1);

// Few distinct values, so filters hit, miss and tie often; every type the planner treats
// specially (numbers of four kinds, NaN, dates, ObjectIds, null, arrays, sub-documents).
const scalar = fc.oneof(
  fc.constantFrom(-1, 0, 1, 2, 2.5, 3, Number.NaN),
  fc.constantFrom(Long.fromNumber(2), Long.fromNumber(4)),
  fc.constant(Decimal128.fromString('2.5')),
  fc.constantFrom('a', 'b', 'c', ''),
  fc.constantFrom(new Date(DAY), new Date(DAY + 1000)),
  fc.constantFrom(...OID),
  fc.constantFrom(true, false, null),
);
const flatValue = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 2, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  // Numbers on both sides of a range: each bound can be met by a different element.
  { weight: 2, arbitrary: fc.array(fc.constantFrom(-1, 0, 1, 2, 2.5, 3), { minLength: 2, maxLength: 3 }) },
);
const fieldValue = fc.oneof(
  { weight: 10, arbitrary: flatValue },
  { weight: 1, arbitrary: fc.array(fc.array(scalar, { maxLength: 2 }), { maxLength: 2 }) },
);
// A dotted path meets at most one array: where it crosses two (arrays of arrays, or arrays
// inside an array of sub-documents) mingo's matching differs from mongod's and from the
// index's, with or without this planner (README, "What still differs").
const documentArb = fc.record(
  {
    a: fieldValue,
    c: fieldValue,
    s: fc.oneof(
      fc.record({ b: flatValue }, { requiredKeys: [], noNullPrototype: true }),
      fc.array(fc.record({ b: scalar }, { requiredKeys: [], noNullPrototype: true }), { maxLength: 2 }),
    ),
  },
  { requiredKeys: [], noNullPrototype: true },
);

const FIELDS = ['a', 'c', 's.b'] as const;
const field = fc.constantFrom(...FIELDS);
// Both bounds of one type, so a range can be empty for scalars yet met by two elements of an array.
const sameTypeBounds = fc.oneof(
  fc.tuple(fc.constantFrom(-1, 0, 1, 2, 2.5, 3), fc.constantFrom(-1, 0, 1, 2, 2.5, 3)),
  fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('a', 'b', 'c')),
);
const twoBounds = fc
  .tuple(sameTypeBounds, fc.constantFrom('$gt', '$gte'), fc.constantFrom('$lt', '$lte'))
  .map(([[low, high], lower, upper]) => ({ [lower]: low, [upper]: high }));
const comparison = fc.oneof(
  scalar,
  twoBounds,
  fc.record({ $eq: scalar }),
  fc.record({ $in: fc.array(scalar, { minLength: 1, maxLength: 3 }) }),
  fc
    .record(
      { $gt: scalar, $gte: scalar, $lt: scalar, $lte: scalar, $exists: fc.boolean(), $ne: scalar },
      { requiredKeys: [], noNullPrototype: true },
    )
    .filter((cond) => Object.keys(cond).length > 0),
);
const clause = fc.dictionary(field, comparison, { minKeys: 1, maxKeys: 2, noNullPrototype: true });
const filterArb = fc.oneof(
  { weight: 4, arbitrary: clause },
  { weight: 1, arbitrary: fc.record({ $and: fc.array(clause, { minLength: 1, maxLength: 2 }) }) },
  { weight: 1, arbitrary: fc.tuple(clause, clause).map(([x, y]) => ({ ...x, $and: [y] })) },
  // A top-level `$or` reaches through each clause's own access when every clause has one.
  { weight: 1, arbitrary: fc.record({ $or: fc.array(clause, { minLength: 1, maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.tuple(clause, clause, clause).map(([x, y, z]) => ({ ...x, $or: [y, z] })) },
);

const partialFilter = fc.oneof(
  fc.dictionary(field, comparison, { minKeys: 1, maxKeys: 2, noNullPrototype: true }),
  fc.constant({ a: { $exists: true } }),
  fc.constant({ $and: [{ a: { $gt: 0 } }, { c: true }] }),
);
const indexArb = fc.record(
  {
    key: fc
      .uniqueArray(field, { minLength: 1, maxLength: 2 })
      .map((fields) => Object.fromEntries(fields.map((f, i) => [f, i === 0 ? 1 : -1]))),
    sparse: fc.boolean(),
    unique: fc.boolean(),
    partialFilterExpression: partialFilter,
  },
  { requiredKeys: ['key'], noNullPrototype: true },
);

function collectionWith(docs: Doc[], indexes: Array<Record<string, unknown>>): Collection {
  const collection = new Collection('planner', 'docs');
  indexes.forEach((spec, i) => {
    try {
      collection.createIndex({ ...spec, name: `i${i}` });
    } catch {
      // An equivalent index already exists; the others still make a valid case.
    }
  });
  docs.forEach((doc, i) => {
    try {
      collection.insert({ _id: i, ...doc });
    } catch {
      // Parallel arrays in a compound index are refused here and by the plain collection below.
    }
  });
  return collection;
}

/** The same documents (same ids, same natural order) in a collection without indexes. */
function withoutIndexes(collection: Collection): Collection {
  const plain = new Collection('planner', 'plain');
  for (const doc of collection.all()) plain.insert(doc);
  return plain;
}

function ids(docs: Doc[]): unknown[] {
  return docs.map((d) => d._id);
}

describe('query planner', () => {
  it('returns exactly what a full scan returns, for any documents, indexes and filter', () => {
    fc.assert(
      fc.property(
        fc.array(documentArb, { maxLength: 25 }),
        fc.array(indexArb, { maxLength: 3 }),
        filterArb,
        (docs, indexes, filter) => {
          const indexed = collectionWith(docs, indexes);
          expect(ids(runFind(indexed, filter))).toEqual(ids(runFind(withoutIndexes(indexed), filter)));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('keeps the answer right while documents are updated and removed after the index was scanned', () => {
    fc.assert(
      fc.property(
        fc.array(documentArb, { minLength: 1, maxLength: 20 }),
        indexArb,
        fc.array(fc.tuple(fc.nat(), documentArb, fc.constantFrom('remove', 'replace', 'update')), {
          maxLength: 10,
        }),
        filterArb,
        (docs, index, changes, filter) => {
          const indexed = collectionWith(docs, [index]);
          runFind(indexed, filter);
          for (const [at, doc, change] of changes) {
            const current = indexed.all()[at % Math.max(1, indexed.count)];
            if (!current) break;
            if (change === 'remove') indexed.remove(current);
            else {
              try {
                // An update shares the fields it leaves alone with the stored version (what
                // lets the index keep their keys); a replacement shares nothing.
                indexed.replace(
                  current,
                  change === 'update' ? { ...current, ...doc } : { _id: current._id, ...doc },
                );
              } catch {
                // A refused write leaves the collection as it was.
              }
            }
          }
          expect(ids(runFind(indexed, filter))).toEqual(ids(runFind(withoutIndexes(indexed), filter)));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('equality, $in and $or of them without mingo', () => {
  it('match exactly what mingo matches, for any documents and any scalar list', () => {
    const condition = fc.oneof(
      scalar,
      fc.record({ $eq: scalar }),
      fc.record({ $in: fc.array(scalar, { minLength: 1, maxLength: 4 }) }),
    );
    fc.assert(
      fc.property(
        fc.array(documentArb, { maxLength: 25 }),
        fc
          .dictionary(fc.constantFrom('_id', 'a', 'c'), condition, {
            minKeys: 1,
            maxKeys: 2,
            noNullPrototype: true,
          })
          .chain((simple) =>
            fc.oneof(
              fc.constant<Doc>(simple),
              fc.constant<Doc>({ $or: [simple] }),
              fc.constant<Doc>({ $or: [simple, { a: 1 }] }),
              fc.constant<Doc>({ c: 'a', $or: [{ a: 2 }, simple] }),
            ),
          ),
        (docs, filter) => {
          const plain = collectionWith(docs, []);
          const query = new Query(filter, MINGO_COMPILED);
          expect(ids(runFind(plain, filter))).toEqual(ids(plain.all().filter((doc) => query.test(doc))));
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('index use', () => {
  const farmers = () => {
    const collection = new Collection('planner', 'farmers');
    for (let i = 0; i < 100; i++) {
      collection.insert({
        _id: i,
        org: `org-${i % 5}`,
        registeredAt: new Date(DAY + i * 1000),
        score: i,
        pending: i % 25 === 0,
      });
    }
    return collection;
  };

  it('reads a range on an indexed field from the index', () => {
    const collection = farmers();
    collection.createIndex({ key: { registeredAt: 1 }, name: 'registeredAt_1' });
    const from = new Date(DAY + 10_000);
    const to = new Date(DAY + 15_000);
    const found = selectDocs(collection, { registeredAt: { $gte: from, $lt: to } });
    expect(found.plan).toMatchObject({ stage: 'IXSCAN', index: { name: 'registeredAt_1' } });
    expect(ids(found.docs)).toEqual([10, 11, 12, 13, 14]);
    expect(found.docsExamined).toBe(5);
  });

  it('reads equality on leading fields and a range on the next from a compound index', () => {
    const collection = farmers();
    collection.createIndex({ key: { org: 1, score: -1 }, name: 'org_1_score_-1' });
    const found = selectDocs(collection, { org: 'org-1', score: { $gt: 80 } });
    expect(found.plan).toMatchObject({ stage: 'IXSCAN', index: { name: 'org_1_score_-1' } });
    expect(ids(found.docs)).toEqual([81, 86, 91, 96]);
    expect(found.docsExamined).toBe(4);
    expect(selectDocs(collection, { org: 'org-1' }).docsExamined).toBe(20);
  });

  it("uses a partial index when the query implies its filter, as the outbox relay's `{ pending: true }` does", () => {
    const collection = farmers();
    collection.createIndex({
      key: { pending: 1 },
      name: 'pending_1',
      partialFilterExpression: { pending: true },
    });
    const found = selectDocs(collection, { pending: true });
    expect(found.plan).toMatchObject({ stage: 'IXSCAN', index: { name: 'pending_1' } });
    expect(ids(found.docs)).toEqual([0, 25, 50, 75]);
    expect(found.docsExamined).toBe(4);
  });

  it('scans when the query does not imply the partial filter (the index lacks documents it could match)', () => {
    const collection = farmers();
    collection.createIndex({
      key: { pending: 1 },
      name: 'pending_1',
      partialFilterExpression: { pending: true },
    });
    const found = selectDocs(collection, { pending: false });
    expect(found.plan).toEqual({ stage: 'COLLSCAN' });
    expect(found.docs).toHaveLength(96);
  });

  it("reads a top-level `$or` through each clause's index, as the policy look-up of a batch does", () => {
    const collection = farmers();
    collection.createIndex({ key: { org: 1 }, name: 'org_1' });
    const found = selectDocs(collection, { $or: [{ _id: { $in: [3, 4] } }, { org: { $in: ['org-1'] } }] });
    expect(found.plan).toMatchObject({ stage: 'OR', plans: [{ stage: 'IDHACK' }, { stage: 'IXSCAN' }] });
    expect(ids(found.docs)).toEqual([
      1, 3, 4, 6, 11, 16, 21, 26, 31, 36, 41, 46, 51, 56, 61, 66, 71, 76, 81, 86, 91, 96,
    ]);
    expect(found.docsExamined).toBe(22);
    // One clause without an access of its own: every document is tested.
    expect(selectDocs(collection, { $or: [{ _id: 3 }, { score: 4 }] }).plan).toEqual({ stage: 'COLLSCAN' });
  });

  it('keeps the index right and unique when an update leaves indexed fields alone or changes them', () => {
    const collection = farmers();
    collection.createIndex({ key: { org: 1, score: 1 }, name: 'org_score', unique: true });
    collection.createIndex({
      key: { score: 1 },
      name: 'pending_score',
      partialFilterExpression: { pending: true },
    });
    const stored = (id: number) => collection.byId(id) as Doc;
    // Only an unindexed field changes: the other fields are the very same values.
    collection.replace(stored(25), { ...stored(25), registeredAt: new Date(DAY) });
    expect(ids(selectDocs(collection, { score: { $gte: 20, $lt: 30 }, pending: true }).docs)).toEqual([25]);
    // The partial filter's field changes: 25 leaves the partial index.
    collection.replace(stored(25), { ...stored(25), pending: false });
    expect(ids(selectDocs(collection, { score: { $gte: 20, $lt: 30 }, pending: true }).docs)).toEqual([]);
    // An indexed field changes to another document's key: refused, nothing changed.
    expect(() => collection.replace(stored(6), { ...stored(6), score: 1 })).toThrow('E11000');
    expect(ids(selectDocs(collection, { org: 'org-1', score: 1 }).docs)).toEqual([1]);
    collection.replace(stored(6), { ...stored(6), score: 1000 });
    expect(ids(selectDocs(collection, { org: 'org-1', score: 1000 }).docs)).toEqual([6]);
  });

  it('uses one bound only on a field that has held an array, since each bound may match another element', () => {
    const collection = new Collection('planner', 'multikey');
    collection.createIndex({ key: { n: 1 }, name: 'n_1' });
    collection.insert({ _id: 1, n: [1, 10] });
    collection.insert({ _id: 2, n: 5 });
    const found = selectDocs(collection, { n: { $gt: 8, $lt: 3 } });
    expect(found.plan).toMatchObject({ stage: 'IXSCAN', range: { lower: { value: 8 } } });
    expect(found.plan).not.toHaveProperty('range.upper');
    expect(ids(found.docs)).toEqual([1]);
  });
});
