// Aggregation pipelines and the counting commands with concrete expected outputs (MongoDB 7.0).
import { connectDriver, type DriverHandle } from '@parametric/test-harness';
import type { Document } from 'mongodb';
import { type Doc, serverError } from './support';

const ORDERS = [
  { _id: 1, customer: 'c1', item: 'apple', qty: 5, price: 2, status: 'A', tags: ['fruit', 'red'] },
  { _id: 2, customer: 'c2', item: 'banana', qty: 10, price: 1, status: 'A', tags: ['fruit'] },
  { _id: 3, customer: 'c1', item: 'carrot', qty: 3, price: 3, status: 'B', tags: [] },
  { _id: 4, customer: 'c3', item: 'apple', qty: 8, price: 2, status: 'A' },
  { _id: 5, customer: 'c2', item: 'date', qty: 1, price: 10, status: 'C', tags: ['fruit', 'sweet'] },
];

const CUSTOMERS = [
  { _id: 'c1', name: 'Ann', address: { city: 'Oslo' } },
  { _id: 'c2', name: 'Bob', address: { city: 'Bergen' } },
  { _id: 'c4', name: 'Dora', address: { city: 'Oslo' } },
];

describe('conformance: aggregate and counting', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('aggregate');
    await handle.db.collection<Doc>('orders').insertMany(ORDERS.map((o) => ({ ...o })));
    await handle.db.collection<Doc>('customers').insertMany(CUSTOMERS.map((c) => ({ ...c })));
  });

  afterAll(async () => {
    await handle.close();
  });

  const orders = () => handle.db.collection<Doc>('orders');
  const run = (pipeline: Document[]) => orders().aggregate(pipeline).toArray();

  describe('stages', () => {
    it('$set on a nested path changes only the pipeline output, never the stored documents', async () => {
      const out = await handle.db
        .collection<Doc>('customers')
        .aggregate([{ $match: { _id: 'c1' } }, { $set: { 'address.city': 'Lagos', 'address.zip': '0150' } }])
        .toArray();
      expect(out).toEqual([{ _id: 'c1', name: 'Ann', address: { city: 'Lagos', zip: '0150' } }]);
      expect(await handle.db.collection<Doc>('customers').findOne({ _id: 'c1' })).toEqual(CUSTOMERS[0]);
    });

    it('$match + $group + $sort: quantity and order count per customer', async () => {
      expect(
        await run([
          { $match: { status: { $in: ['A', 'B', 'C'] } } },
          { $group: { _id: '$customer', qty: { $sum: '$qty' }, orders: { $sum: 1 } } },
          { $sort: { _id: 1 } },
        ]),
      ).toEqual([
        { _id: 'c1', qty: 8, orders: 2 },
        { _id: 'c2', qty: 11, orders: 2 },
        { _id: 'c3', qty: 8, orders: 1 },
      ]);
    });

    it('$group with _id null computes $sum of an expression, $avg, $max and $min over all documents', async () => {
      expect(
        await run([
          {
            $group: {
              _id: null,
              revenue: { $sum: { $multiply: ['$qty', '$price'] } },
              avgQty: { $avg: '$qty' },
              maxPrice: { $max: '$price' },
              minQty: { $min: '$qty' },
            },
          },
        ]),
      ).toEqual([{ _id: null, revenue: 55, avgQty: 5.4, maxPrice: 10, minQty: 1 }]);
    });

    it('$group $push keeps input order after a $sort; $addToSet collects distinct values; $first takes the first', async () => {
      const out = await run([
        { $sort: { _id: 1 } },
        {
          $group: {
            _id: '$status',
            items: { $push: '$item' },
            distinctItems: { $addToSet: '$item' },
            firstId: { $first: '$_id' },
          },
        },
        { $sort: { _id: 1 } },
      ]);
      expect(out.map((g) => [g._id, g.items, g.firstId])).toEqual([
        ['A', ['apple', 'banana', 'apple'], 1],
        ['B', ['carrot'], 3],
        ['C', ['date'], 5],
      ]);
      expect([...((out[0] as Document).distinctItems as string[])].sort()).toEqual(['apple', 'banana']);
    });

    it('$sort + $skip + $limit pages through the sorted stream', async () => {
      const out = await run([{ $sort: { qty: -1 } }, { $skip: 1 }, { $limit: 2 }, { $project: { _id: 1 } }]);
      expect(out).toEqual([{ _id: 4 }, { _id: 1 }]);
    });

    it('$project computes new fields and drops _id with _id:0', async () => {
      const out = await run([
        { $sort: { _id: 1 } },
        { $limit: 2 },
        {
          $project: {
            _id: 0,
            item: 1,
            total: { $multiply: ['$qty', '$price'] },
            upper: { $toUpper: '$item' },
          },
        },
      ]);
      expect(out).toEqual([
        { item: 'apple', total: 10, upper: 'APPLE' },
        { item: 'banana', total: 10, upper: 'BANANA' },
      ]);
    });

    it('$count answers one document with the count, and no document at all when nothing matches', async () => {
      expect(await run([{ $match: { status: 'A' } }, { $count: 'n' }])).toEqual([{ n: 3 }]);
      expect(await run([{ $match: { status: 'Z' } }, { $count: 'n' }])).toEqual([]);
    });

    it('$lookup joins by localField/foreignField and yields [] when nothing joins', async () => {
      const out = await handle.db
        .collection<Doc>('customers')
        .aggregate([
          { $lookup: { from: 'orders', localField: '_id', foreignField: 'customer', as: 'orders' } },
          { $sort: { _id: 1 } },
          { $project: { name: 1, orderIds: { $sortArray: { input: '$orders._id', sortBy: 1 } } } },
        ])
        .toArray();
      expect(out).toEqual([
        { _id: 'c1', name: 'Ann', orderIds: [1, 3] },
        { _id: 'c2', name: 'Bob', orderIds: [2, 5] },
        { _id: 'c4', name: 'Dora', orderIds: [] },
      ]);
    });

    it('$lookup from orders to customers, then $unwind, reads the joined fields', async () => {
      const out = await run([
        { $match: { _id: { $in: [1, 2, 4] } } },
        { $lookup: { from: 'customers', localField: 'customer', foreignField: '_id', as: 'who' } },
        { $unwind: '$who' },
        { $sort: { _id: 1 } },
        { $project: { _id: 1, name: '$who.name' } },
      ]);
      // Order 4 belongs to c3, who has no customer document: $unwind of [] drops it.
      expect(out).toEqual([
        { _id: 1, name: 'Ann' },
        { _id: 2, name: 'Bob' },
      ]);
    });

    it('$unwind emits one document per element and drops empty or missing arrays', async () => {
      const out = await run([
        { $unwind: '$tags' },
        { $sort: { _id: 1, tags: 1 } },
        { $project: { tags: 1 } },
      ]);
      expect(out).toEqual([
        { _id: 1, tags: 'fruit' },
        { _id: 1, tags: 'red' },
        { _id: 2, tags: 'fruit' },
        { _id: 5, tags: 'fruit' },
        { _id: 5, tags: 'sweet' },
      ]);
    });

    it('$unwind with preserveNullAndEmptyArrays and includeArrayIndex keeps empty/missing ones with a null index', async () => {
      const out = await run([
        { $unwind: { path: '$tags', preserveNullAndEmptyArrays: true, includeArrayIndex: 'i' } },
        { $match: { _id: { $in: [3, 4, 5] } } },
        { $sort: { _id: 1, i: 1 } },
        { $project: { tags: 1, i: 1 } },
      ]);
      expect(out).toEqual([
        { _id: 3, i: null },
        { _id: 4, i: null },
        { _id: 5, tags: 'fruit', i: 0 },
        { _id: 5, tags: 'sweet', i: 1 },
      ]);
    });

    it('$addFields adds computed fields and keeps all existing ones', async () => {
      const out = await run([
        { $match: { _id: 3 } },
        { $addFields: { total: { $multiply: ['$qty', '$price'] } } },
      ]);
      expect(out).toEqual([{ ...ORDERS[2], total: 9 }]);
    });

    it('$facet runs sub-pipelines over the same input and answers one document', async () => {
      const out = await run([
        {
          $facet: {
            byStatus: [{ $group: { _id: '$status', n: { $sum: 1 } } }, { $sort: { _id: 1 } }],
            biggest: [{ $sort: { qty: -1 } }, { $limit: 1 }, { $project: { _id: 0, item: 1 } }],
            total: [{ $count: 'n' }],
          },
        },
      ]);
      expect(out).toEqual([
        {
          byStatus: [
            { _id: 'A', n: 3 },
            { _id: 'B', n: 1 },
            { _id: 'C', n: 1 },
          ],
          biggest: [{ item: 'banana' }],
          total: [{ n: 5 }],
        },
      ]);
    });

    it('$sortByCount puts the most frequent value first as { _id, count }', async () => {
      const out = await run([{ $sortByCount: '$item' }]);
      expect(out).toHaveLength(4);
      expect(out[0]).toEqual({ _id: 'apple', count: 2 });
    });

    it('$replaceRoot, $set and $unset stages reshape documents', async () => {
      const out = await handle.db
        .collection<Doc>('customers')
        .aggregate([
          { $sort: { _id: 1 } },
          { $limit: 1 },
          { $set: { 'address.name': '$name' } },
          { $replaceRoot: { newRoot: '$address' } },
          { $unset: 'city' },
        ])
        .toArray();
      expect(out).toEqual([{ name: 'Ann' }]);
    });

    it('$match with $expr compares fields inside the pipeline', async () => {
      const out = await run([{ $match: { $expr: { $gt: ['$price', '$qty'] } } }, { $project: { _id: 1 } }]);
      expect(out).toEqual([{ _id: 5 }]);
    });

    it('$out writes the pipeline result into a new collection', async () => {
      const result = await run([
        { $match: { status: 'A' } },
        { $project: { item: 1 } },
        { $out: 'orders_a' },
      ]);
      expect(result).toEqual([]);
      const written = await handle.db.collection<Doc>('orders_a').find().sort({ _id: 1 }).toArray();
      expect(written).toEqual([
        { _id: 1, item: 'apple' },
        { _id: 2, item: 'banana' },
        { _id: 4, item: 'apple' },
      ]);
    });

    it('an unknown stage fails with code 40324 "Unrecognized pipeline stage name: \'$foo\'"', async () => {
      const error = await serverError(run([{ $foo: {} }]));
      expect(error.code).toBe(40324);
      expect(error.message).toBe("Unrecognized pipeline stage name: '$foo'");
    });

    it('aggregate on a missing collection answers no documents', async () => {
      expect(
        await handle.db
          .collection<Doc>('no_such_orders')
          .aggregate([{ $match: {} }])
          .toArray(),
      ).toEqual([]);
    });
  });

  describe('counting and distinct', () => {
    it('countDocuments counts matches, honouring skip and limit', async () => {
      expect(await orders().countDocuments()).toBe(5);
      expect(await orders().countDocuments({ status: 'A' })).toBe(3);
      expect(await orders().countDocuments({}, { skip: 1, limit: 2 })).toBe(2);
      expect(await orders().countDocuments({}, { skip: 4 })).toBe(1);
    });

    it('countDocuments and estimatedDocumentCount on a missing collection answer 0', async () => {
      expect(await handle.db.collection<Doc>('no_such_coll').countDocuments()).toBe(0);
      expect(await handle.db.collection<Doc>('no_such_coll').estimatedDocumentCount()).toBe(0);
    });

    it('estimatedDocumentCount answers the collection size', async () => {
      expect(await orders().estimatedDocumentCount()).toBe(5);
    });

    it('the raw count command answers { n, ok: 1 } and honours query, skip and limit', async () => {
      expect(await handle.db.command({ count: 'orders' })).toEqual({ n: 5, ok: 1 });
      expect(await handle.db.command({ count: 'orders', query: { status: 'A' } })).toEqual({ n: 3, ok: 1 });
      expect(await handle.db.command({ count: 'orders', query: {}, skip: 3, limit: 10 })).toEqual({
        n: 2,
        ok: 1,
      });
      expect(await handle.db.command({ count: 'no_such_coll' })).toEqual({ n: 0, ok: 1 });
    });

    it('distinct answers each value once, flattening arrays, with an optional filter and dotted paths', async () => {
      expect([...(await orders().distinct('item'))].sort()).toEqual(['apple', 'banana', 'carrot', 'date']);
      expect([...(await orders().distinct('tags'))].sort()).toEqual(['fruit', 'red', 'sweet']);
      expect([...(await orders().distinct('item', { status: 'A' }))].sort()).toEqual(['apple', 'banana']);
      expect([...(await handle.db.collection<Doc>('customers').distinct('address.city'))].sort()).toEqual([
        'Bergen',
        'Oslo',
      ]);
    });

    it('the raw distinct command answers { values, ok: 1 }', async () => {
      const reply = await handle.db.command({ distinct: 'orders', key: 'status' });
      expect(reply.ok).toBe(1);
      expect([...(reply.values as string[])].sort()).toEqual(['A', 'B', 'C']);
      expect(Object.keys(reply).sort()).toEqual(['ok', 'values']);
    });
  });
});
