// Exact int64 and Decimal128 arithmetic in updates and aggregation, with mongod 7.0's type
// promotion: int+int stays int until it overflows into long, long+double is double, anything
// with a decimal is decimal. Types are read back with promoteValues: false.
import { connectDriver, type DriverHandle } from '@parametric/test-harness';
import { Decimal128, type Document, Long } from 'mongodb';
import { bsonNumbers, type Doc, serverError } from './support';

const L = (text: string) => Long.fromString(text);
const D = (text: string) => Decimal128.fromString(text);
const RAW = { promoteValues: false } as const;

describe('conformance: int64 and Decimal128 arithmetic', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('numeric_arithmetic');
  });

  afterAll(async () => {
    await handle.close();
  });

  const coll = (name: string) => handle.db.collection<Doc>(name);
  const stored = async (name: string, id: string | number) =>
    bsonNumbers(await coll(name).findOne({ _id: id }, RAW));

  describe('$inc', () => {
    it('int64 + int64 stays int64 and exact beyond 2^53', async () => {
      const c = coll('inc_long');
      await c.insertOne({ _id: 1, v: L('9007199254740993') });
      await c.updateOne({ _id: 1 }, { $inc: { v: L('4') } });
      expect(await stored('inc_long', 1)).toEqual({ v: 'long 9007199254740997' });
      const doc = await c.findOne({ _id: 1 });
      expect(doc?.v).toEqual(L('9007199254740997'));
    });

    it('follows the promotion rules: int+int overflows into long, long+int is long, long+double is double', async () => {
      const c = coll('inc_promotion');
      await c.insertOne({ _id: 1, int: 2147483647, long: L('10'), mixed: L('10') });
      await c.updateOne(
        { _id: 1 },
        { $inc: { int: 1, long: 5, mixed: 1.5, created: L('9007199254740993') } },
      );
      expect(await stored('inc_promotion', 1)).toEqual({
        int: 'long 2147483648',
        long: 'long 15',
        mixed: 'double 11.5',
        created: 'long 9007199254740993',
      });
    });

    it('Decimal128 arithmetic is decimal, not binary floating point', async () => {
      const c = coll('inc_decimal');
      await c.insertOne({ _id: 1, a: D('0.1'), b: D('1.10'), c: L('9007199254740993') });
      await c.updateOne({ _id: 1 }, { $inc: { a: D('0.2'), b: 1, c: D('0.5') } });
      expect(await stored('inc_decimal', 1)).toEqual({
        a: 'decimal 0.3',
        b: 'decimal 2.10',
        c: 'decimal 9007199254740993.5',
      });
    });

    it('int64 overflow fails the update with code 2 and leaves the document unchanged', async () => {
      const c = coll('inc_overflow');
      await c.insertOne({ _id: 1, v: L('9223372036854775807') });
      const error = await serverError(c.updateOne({ _id: 1 }, { $inc: { v: 1 } }));
      expect(error.code).toBe(2);
      expect(error.message).toMatch(
        /^Failed to apply \$inc operations to current value \(\(NumberLong\)9223372036854775807\) for document \{_id: 1\}/,
      );
      expect(await stored('inc_overflow', 1)).toEqual({ v: 'long 9223372036854775807' });
    });

    it('an increment that leaves the value identical modifies nothing', async () => {
      const c = coll('inc_noop');
      await c.insertOne({ _id: 1, v: L('9007199254740993') });
      const result = await c.updateOne({ _id: 1 }, { $inc: { v: L('0') } });
      expect(result.modifiedCount).toBe(0);
    });

    it('works through positional and array-filter paths', async () => {
      const c = coll('inc_positional');
      await c.insertOne({
        _id: 1,
        lines: [
          { sku: 'a', minor: L('9007199254740993') },
          { sku: 'b', minor: D('1.10') },
        ],
      });
      await c.updateOne({ _id: 1, 'lines.sku': 'a' }, { $inc: { 'lines.$.minor': L('2') } });
      await c.updateOne(
        { _id: 1 },
        { $inc: { 'lines.$[line].minor': D('0.05') } },
        { arrayFilters: [{ 'line.sku': 'b' }] },
      );
      const doc = await c.findOne({ _id: 1 }, RAW);
      expect(doc?.lines.map((l: Document) => bsonNumbers(l).minor)).toEqual([
        'long 9007199254740995',
        'decimal 1.15',
      ]);
    });

    it('a bulk of increments on one int64 stays exact', async () => {
      const c = coll('inc_many');
      await c.insertOne({ _id: 1, v: L('9007199254740000') });
      for (let i = 0; i < 20; i++) await c.updateOne({ _id: 1 }, { $inc: { v: L('99') } });
      expect(await stored('inc_many', 1)).toEqual({ v: 'long 9007199254741980' });
    });
  });

  describe('$mul', () => {
    it('multiplies int64 exactly and int32 overflow widens to int64', async () => {
      const c = coll('mul_exact');
      await c.insertOne({ _id: 1, big: L('3037000499'), small: 65536, price: D('19.99') });
      await c.updateOne({ _id: 1 }, { $mul: { big: L('3037000499'), small: 65536, price: 3 } });
      expect(await stored('mul_exact', 1)).toEqual({
        big: 'long 9223372030926249001',
        small: 'long 4294967296',
        price: 'decimal 59.97',
      });
    });

    it('int64 overflow fails with code 2', async () => {
      const c = coll('mul_overflow');
      await c.insertOne({ _id: 1, v: L('4611686018427387904') });
      const error = await serverError(c.updateOne({ _id: 1 }, { $mul: { v: 2 } }));
      expect(error.code).toBe(2);
      expect(error.message).toMatch(
        /^Failed to apply \$mul operations to current value \(\(NumberLong\)4611686018427387904\)/,
      );
    });

    it('on a missing field creates zero of the multiplier type', async () => {
      const c = coll('mul_missing');
      await c.insertOne({ _id: 1 });
      await c.updateOne({ _id: 1 }, { $mul: { v: L('5') } });
      expect(await stored('mul_missing', 1)).toEqual({ v: 'long 0' });
    });
  });

  describe('$min and $max', () => {
    it('compare by numeric value across types and keep the winning value with its type', async () => {
      const c = coll('minmax');
      await c.insertOne({ _id: 1, hi: L('9007199254740993'), lo: L('9007199254740993'), same: L('5') });
      await c.updateOne(
        { _id: 1 },
        { $max: { hi: D('9007199254740993.5') }, $min: { lo: 9007199254740992 } },
      );
      expect(await stored('minmax', 1)).toEqual({
        hi: 'decimal 9007199254740993.5',
        lo: 'double 9007199254740992',
        same: 'long 5',
      });
    });

    it('leave the document unmodified when the value is not beyond the bound, even if typed differently', async () => {
      const c = coll('minmax_noop');
      await c.insertOne({ _id: 1, v: L('9007199254740993') });
      const max = await c.updateOne({ _id: 1 }, { $max: { v: L('9007199254740992') } });
      const min = await c.updateOne({ _id: 1 }, { $min: { v: D('9007199254740993.0') } });
      expect([max.modifiedCount, min.modifiedCount]).toEqual([0, 0]);
      expect(await stored('minmax_noop', 1)).toEqual({ v: 'long 9007199254740993' });
    });
  });

  describe('aggregation arithmetic', () => {
    const rows = () => coll('rows');

    beforeAll(async () => {
      await rows().insertMany([
        { _id: 1, g: 'long', v: L('9007199254740993') },
        { _id: 2, g: 'long', v: L('9007199254740993') },
        { _id: 3, g: 'long', v: L('11') },
        { _id: 4, g: 'mixed', v: D('0.10') },
        { _id: 5, g: 'mixed', v: L('9007199254740993') },
        { _id: 6, g: 'int', v: 2147483647 },
        { _id: 7, g: 'int', v: 2 },
        { _id: 8, g: 'dec', v: D('1') },
        { _id: 9, g: 'dec', v: D('2') },
        { _id: 10, g: 'dec', v: 'not a number' },
      ]);
    });

    const grouped = async (accumulator: Document) => {
      const out = await rows()
        .aggregate([{ $group: { _id: '$g', r: accumulator } }, { $sort: { _id: 1 } }], RAW)
        .toArray();
      return Object.fromEntries(out.map((d) => [d._id, bsonNumbers(d).r]));
    };

    it('$sum adds int64 exactly, widens int32 overflow to int64 and turns decimal when one is present', async () => {
      expect(await grouped({ $sum: '$v' })).toEqual({
        dec: 'decimal 3',
        int: 'long 2147483649',
        long: 'long 18014398509481997',
        mixed: 'decimal 9007199254740993.10',
      });
    });

    it('$avg of integers is a double, of decimals a decimal; non-numbers are ignored', async () => {
      expect(await grouped({ $avg: '$v' })).toEqual({
        dec: 'decimal 1.5',
        int: 'double 1073741824.5',
        long: 'double 6004799503160665',
        mixed: 'decimal 4503599627370496.55',
      });
    });

    it('$min and $max pick by numeric value and return the value with its own type', async () => {
      const out = await rows()
        .aggregate(
          [
            { $match: { v: { $type: 'number' } } },
            { $group: { _id: null, min: { $min: '$v' }, max: { $max: '$v' } } },
            { $project: { _id: 0 } },
          ],
          RAW,
        )
        .toArray();
      expect(bsonNumbers(out[0] ?? null)).toEqual({ min: 'decimal 0.10', max: 'long 9007199254740993' });
    });

    it('$add, $subtract and $multiply keep int64 exact and decimals decimal; int64 overflow becomes double', async () => {
      const out = await rows()
        .aggregate(
          [
            { $match: { _id: 1 } },
            {
              $project: {
                _id: 0,
                plusInt: { $add: ['$v', 4] },
                plusDouble: { $add: ['$v', 1.5] },
                plusDecimal: { $add: ['$v', D('0.5')] },
                overflow: { $add: [L('9223372036854775807'), 1] },
                minus: { $subtract: ['$v', 2] },
                decimalMinus: { $subtract: [D('10.00'), D('0.01')] },
                times: { $multiply: [L('3037000499'), L('3037000499')] },
                decimalTimes: { $multiply: [D('19.99'), 3] },
                quotient: { $divide: [D('10'), D('4')] },
              },
            },
          ],
          RAW,
        )
        .toArray();
      expect(bsonNumbers(out[0] ?? null)).toEqual({
        plusInt: 'long 9007199254740997',
        plusDouble: 'double 9007199254740994',
        plusDecimal: 'decimal 9007199254740993.5',
        overflow: 'double 9223372036854776000',
        minus: 'long 9007199254740991',
        decimalMinus: 'decimal 9.99',
        times: 'long 9223372030926249001',
        decimalTimes: 'decimal 59.97',
        quotient: 'decimal 2.5',
      });
    });
    it('comparison expressions order every numeric type by value', async () => {
      const out = await rows()
        .aggregate([
          { $match: { _id: 1 } },
          {
            $project: {
              _id: 0,
              longAboveDouble: { $gt: ['$v', 9007199254740992] },
              decimalEqualsInt: { $eq: [D('5.0'), 5] },
              decimalBelowDouble: { $lt: [D('0.1'), 0.1] },
              cmp: { $cmp: ['$v', D('9007199254740993.0')] },
              longAboveDecimal: { $gte: ['$v', D('9007199254740992.9')] },
            },
          },
        ])
        .toArray();
      expect(out).toEqual([
        {
          longAboveDouble: true,
          decimalEqualsInt: true,
          decimalBelowDouble: true,
          cmp: 0,
          longAboveDecimal: true,
        },
      ]);
    });

    it('$group puts numerically equal keys of different types into one group', async () => {
      const c = coll('group_keys');
      await c.insertMany([
        { _id: 1, k: 5, amount: L('9007199254740993') },
        { _id: 2, k: L('5'), amount: L('1') },
        { _id: 3, k: D('5.0'), amount: L('2') },
        { _id: 4, k: L('9007199254740993'), amount: L('4') },
      ]);
      const out = await c
        .aggregate(
          [{ $group: { _id: '$k', total: { $sum: '$amount' }, n: { $sum: 1 } } }, { $sort: { n: 1 } }],
          RAW,
        )
        .toArray();
      expect(out.map((d) => [bsonNumbers(d).total, bsonNumbers(d).n])).toEqual([
        ['long 4', 'int 1'],
        ['long 9007199254740996', 'int 3'],
      ]);
    });
  });

  describe('$expr comparisons over int64 fields', () => {
    // As doubles, 9007199254745004 + 5000 and 9007199254750003 are the same number.
    const capacity = { $expr: { $lte: [{ $add: ['$reservedMinor', 5000] }, '$amountMinor'] } };

    beforeAll(async () => {
      await coll('capacity').insertMany([
        { _id: 'fits', amountMinor: L('9007199254750003'), reservedMinor: L('9007199254745003') },
        { _id: 'full', amountMinor: L('9007199254750003'), reservedMinor: L('9007199254745004') },
      ]);
    });

    it('find with $expr compares the exact sums', async () => {
      const found = await coll('capacity').find(capacity).toArray();
      expect(found.map((d) => d._id)).toEqual(['fits']);
    });

    it('findOneAndUpdate reserves capacity atomically and refuses once it is used up', async () => {
      const c = coll('capacity');
      const reserved = await c.findOneAndUpdate(
        { _id: 'fits', ...capacity },
        { $inc: { reservedMinor: L('5000') } },
        { returnDocument: 'after', promoteValues: false },
      );
      expect(bsonNumbers(reserved)).toEqual({
        amountMinor: 'long 9007199254750003',
        reservedMinor: 'long 9007199254750003',
      });
      const again = await c.findOneAndUpdate(
        { _id: 'fits', ...capacity },
        { $inc: { reservedMinor: L('5000') } },
      );
      expect(again).toBeNull();
      expect(await stored('capacity', 'fits')).toEqual({
        amountMinor: 'long 9007199254750003',
        reservedMinor: 'long 9007199254750003',
      });
    });
  });

  it('reaching the int64 maximum exactly is not an overflow; a string target fails with code 14', async () => {
    const c = coll('inc_limits');
    await c.insertMany([
      { _id: 1, v: L('9223372036854775800') },
      { _id: 2, v: 'text' },
    ]);
    await c.updateOne({ _id: 1 }, { $inc: { v: L('7') } });
    expect(await stored('inc_limits', 1)).toEqual({ v: 'long 9223372036854775807' });
    const error = await serverError(c.updateOne({ _id: 2 }, { $inc: { v: L('9007199254740993') } }));
    expect(error.code).toBe(14);
  });
});
