// mongoose 9 BigInt and Decimal128 schema paths for money in minor units: what an application
// sees from a MongoDB 7.0 standalone when amounts pass 2^53.
import { connectMongoose, type MongooseHandle } from '@parametric/test-harness';
import { Long } from 'mongodb';
import { Schema, Types } from 'mongoose';

interface Pool {
  name: string;
  amountMinor: bigint;
  reservedMinor: bigint;
  fee?: Types.Decimal128;
}

// 9007199254750003 and 9007199254750004 are the same double; the tests need them apart.
const AMOUNT = 9007199254750003n;

describe('conformance: mongoose BigInt and Decimal128 paths', () => {
  let handle: MongooseHandle;

  const poolSchema = new Schema<Pool>({
    name: { type: String, required: true },
    amountMinor: { type: BigInt, required: true },
    reservedMinor: { type: BigInt, default: 0n },
    fee: Schema.Types.Decimal128,
  });
  const pools = () => handle.connection.model<Pool>('Pool', poolSchema);

  beforeAll(async () => {
    handle = await connectMongoose('numeric_mongoose');
  });

  afterAll(async () => {
    await handle.close();
  });

  beforeEach(async () => {
    await pools().deleteMany({});
  });

  it('a BigInt path reads back the exact bigint beyond 2^53', async () => {
    const created = await pools().create({ name: 'a', amountMinor: AMOUNT });
    const found = await pools().findById(created._id).orFail();
    expect(found.amountMinor).toBe(AMOUNT);
    expect(found.reservedMinor).toBe(0n);
    const lean = await pools().findById(created._id).lean().orFail();
    expect(lean.amountMinor).toEqual(Long.fromBigInt(AMOUNT));
  });

  it('$inc on a BigInt path is exact and stays int64', async () => {
    const created = await pools().create({
      name: 'a',
      amountMinor: AMOUNT,
      reservedMinor: 9007199254740993n,
    });
    await pools().updateOne({ _id: created._id }, { $inc: { reservedMinor: 2n } });
    const after = await pools()
      .findOneAndUpdate({ _id: created._id }, { $inc: { reservedMinor: 3n } }, { new: true })
      .orFail();
    expect(after.reservedMinor).toBe(9007199254740998n);
    const types = await pools().countDocuments({ _id: created._id, reservedMinor: { $type: 'long' } });
    expect(types).toBe(1);
  });

  it('a range query and a sort on a BigInt path order amounts exactly', async () => {
    await pools().create([
      { name: 'small', amountMinor: 5n },
      { name: 'high', amountMinor: AMOUNT + 1n },
      { name: 'low', amountMinor: AMOUNT },
      { name: 'edge', amountMinor: 9007199254740992n },
    ]);
    const above = await pools()
      .find({ amountMinor: { $gt: 9007199254740992n, $lte: AMOUNT + 1n } })
      .sort({ amountMinor: -1 });
    expect(above.map((p) => [p.name, p.amountMinor])).toEqual([
      ['high', AMOUNT + 1n],
      ['low', AMOUNT],
    ]);
    const ascending = await pools().find().sort({ amountMinor: 1 });
    expect(ascending.map((p) => p.name)).toEqual(['small', 'edge', 'low', 'high']);
    expect(await pools().countDocuments({ amountMinor: AMOUNT })).toBe(1);
  });

  it('reserves capacity with $expr in findOneAndUpdate until the exact limit', async () => {
    const created = await pools().create({
      name: 'cap',
      amountMinor: AMOUNT,
      reservedMinor: AMOUNT - 10_000n,
    });
    const fits = { $expr: { $lte: [{ $add: ['$reservedMinor', 5000] }, '$amountMinor'] } };
    const reserve = () =>
      pools().findOneAndUpdate(
        { _id: created._id, ...fits },
        { $inc: { reservedMinor: 5000n } },
        { new: true },
      );
    expect((await reserve())?.reservedMinor).toBe(AMOUNT - 5000n);
    expect((await reserve())?.reservedMinor).toBe(AMOUNT);
    expect(await reserve()).toBeNull();
    expect((await pools().findById(created._id).orFail()).reservedMinor).toBe(AMOUNT);
  });

  it('sums BigInt paths exactly in an aggregation', async () => {
    await pools().create([
      { name: 'a', amountMinor: AMOUNT },
      { name: 'b', amountMinor: AMOUNT },
      { name: 'c', amountMinor: 1n },
    ]);
    const [total] = await pools().aggregate<{ total: Long }>([
      { $group: { _id: null, total: { $sum: '$amountMinor' } } },
    ]);
    expect(BigInt(String(total?.total))).toBe(2n * AMOUNT + 1n);
  });

  it('a Decimal128 path increments and compares in decimal', async () => {
    const created = await pools().create({
      name: 'fee',
      amountMinor: 1n,
      fee: Types.Decimal128.fromString('1.10'),
    });
    await pools().updateOne({ _id: created._id }, { $inc: { fee: Types.Decimal128.fromString('0.05') } });
    const found = await pools().findById(created._id).orFail();
    expect(found.fee?.toString()).toBe('1.15');
    // A double bound compares with the decimal by value: 1.1 (1.1000000000000000888…) < 1.15.
    const range: Record<string, unknown> = { fee: { $gt: 1.1, $lt: Types.Decimal128.fromString('1.151') } };
    expect(await pools().countDocuments(range)).toBe(1);
  });
});
