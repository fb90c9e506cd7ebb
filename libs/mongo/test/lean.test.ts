import { findOneLean, onLeanRead } from '@parametric/mongo';
import { connectMongoose, type MongooseHandle } from '@parametric/test-harness';
import { type Model, Schema } from 'mongoose';

interface Account {
  _id: string;
  label: string;
  balance: bigint;
  limit?: bigint;
}

/** The fix a money path registers: int64 read back by the driver as a number, made a bigint. */
const asBigint = (fields: Record<string, unknown>) => {
  for (const path of ['balance', 'limit']) {
    if (typeof fields[path] === 'number') fields[path] = BigInt(fields[path] as number);
  }
};

let handle: MongooseHandle;
let Accounts: Model<Account>;

beforeAll(async () => {
  handle = await connectMongoose('mongo_lean');
  const schema = new Schema<Account>({
    _id: { type: String, required: true },
    label: { type: String, required: true },
    balance: { type: BigInt, required: true },
    limit: { type: BigInt },
  });
  onLeanRead(schema, asBigint);
  Accounts = handle.connection.model<Account>('Account', schema);
  await Accounts.init();
});

beforeEach(async () => {
  await Accounts.deleteMany({});
  await Accounts.create([
    { _id: 'a', label: 'with a limit', balance: 12_345n, limit: 9_007_199_254_740_991n },
    { _id: 'b', label: 'without', balance: 0n },
  ]);
});

afterAll(async () => {
  await handle.close();
});

describe('onLeanRead', () => {
  it('fixes every lean find, findOne and findOneAndUpdate of the schema', async () => {
    expect((await Accounts.findOne({ _id: 'a' }).lean())?.balance).toBe(12_345n);
    expect((await Accounts.find({}).sort({ _id: 1 }).lean()).map((a) => a.balance)).toEqual([12_345n, 0n]);
    const updated = await Accounts.findOneAndUpdate(
      { _id: 'b' },
      { $inc: { balance: 5n } },
      { returnDocument: 'after' },
    ).lean();
    expect(updated?.balance).toBe(5n);
  });

  it('leaves a lean read of another schema as the driver gave it', async () => {
    const Other = handle.connection.model('Other', new Schema({ amount: BigInt }));
    await Other.create({ amount: 7n });
    expect((await Other.findOne({}).lean())?.amount).toBe(7);
  });
});

describe('findOneLean', () => {
  it('reads what a lean mongoose read gives, fixes applied', async () => {
    for (const id of ['a', 'b']) {
      const driver = await findOneLean(Accounts, { _id: id });
      expect(driver).toEqual(await Accounts.findOne({ _id: id }).lean());
      expect(typeof driver?.balance).toBe('bigint');
    }
    expect((await findOneLean(Accounts, { _id: 'a' }))?.limit).toBe(9_007_199_254_740_991n);
  });

  it('answers null when nothing matches', async () => {
    expect(await findOneLean(Accounts, { _id: 'nobody' })).toBeNull();
  });

  it('reads the first of several matches, as findOne does', async () => {
    expect(await findOneLean(Accounts, {})).toEqual(await Accounts.findOne({}).lean());
    expect(await findOneLean(Accounts, { balance: { $gte: 0n } })).toEqual(
      await Accounts.findOne({ balance: { $gte: 0n } }).lean(),
    );
  });

  it("rejects with the server's refusal of a filter, never a null that reads as not found", async () => {
    const refused = { _id: { $notAnOperator: 1 } } as never;
    const driver = await Accounts.collection.findOne(refused).catch((err: Error) => err);
    expect(driver).toBeInstanceOf(Error);
    await expect(findOneLean(Accounts, refused)).rejects.toMatchObject({
      name: (driver as Error).name,
      message: (driver as Error).message,
    });
  });
});
