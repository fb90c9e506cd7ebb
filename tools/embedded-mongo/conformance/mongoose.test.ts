// mongoose 9 on a dedicated connection: the behaviour an application sees from a MongoDB 7.0 standalone.
import { connectMongoose, type MongooseHandle } from '@parametric/test-harness';
import { MongoServerError } from 'mongodb';
import { Schema, Types } from 'mongoose';
import { serverError } from './support';

interface User {
  email: string;
  org: string;
  handle: string;
  age?: number;
  tags: string[];
  createdAt?: Date;
  updatedAt?: Date;
}

interface Author {
  name: string;
}

interface Book {
  title: string;
  author: Types.ObjectId;
  year: number;
}

describe('conformance: mongoose', () => {
  let handle: MongooseHandle;

  const userSchema = new Schema<User>(
    {
      email: { type: String, required: true, unique: true },
      org: { type: String, required: true },
      handle: { type: String, required: true },
      age: Number,
      tags: { type: [String], default: [] },
    },
    { timestamps: true },
  );
  userSchema.index({ org: 1, handle: 1 }, { unique: true });

  const authorSchema = new Schema<Author>({ name: { type: String, required: true } });
  const bookSchema = new Schema<Book>({
    title: { type: String, required: true },
    author: { type: Schema.Types.ObjectId, ref: 'Author', required: true },
    year: Number,
  });

  const users = () => handle.connection.model<User>('User', userSchema);
  const authors = () => handle.connection.model<Author>('Author', authorSchema);
  const books = () => handle.connection.model<Book>('Book', bookSchema);

  beforeAll(async () => {
    handle = await connectMongoose('mongoose');
    await users().init();
    await authors().init();
    await books().init();
  });

  afterAll(async () => {
    await handle.close();
  });

  beforeEach(async () => {
    await users().deleteMany({});
    await books().deleteMany({});
    await authors().deleteMany({});
  });

  it('Model.init() builds the schema indexes: _id_, email_1 (unique) and org_1_handle_1 (unique)', async () => {
    const indexes = await users().collection.listIndexes().toArray();
    const byName = new Map(indexes.map((i) => [i.name as string, i]));
    expect([...byName.keys()].sort()).toEqual(['_id_', 'email_1', 'org_1_handle_1']);
    expect(byName.get('email_1')?.unique).toBe(true);
    expect(byName.get('email_1')?.key).toEqual({ email: 1 });
    expect(byName.get('org_1_handle_1')?.unique).toBe(true);
    expect(byName.get('org_1_handle_1')?.key).toEqual({ org: 1, handle: 1 });
  });

  it('a duplicate create on a unique: true path rejects with code 11000 and keyValue, and stores nothing', async () => {
    await users().create({ email: 'a@x.io', org: 'acme', handle: 'a' });
    const error = await serverError(users().create({ email: 'a@x.io', org: 'acme', handle: 'b' }));
    expect(error).toBeInstanceOf(MongoServerError);
    expect(error.code).toBe(11000);
    expect(error.keyValue).toEqual({ email: 'a@x.io' });
    expect(error.keyPattern).toEqual({ email: 1 });
    expect(await users().countDocuments()).toBe(1);
  });

  it('a duplicate on the compound unique index rejects with 11000 and keyValue { org, handle }', async () => {
    await users().create({ email: 'a@x.io', org: 'acme', handle: 'bob' });
    await users().create({ email: 'b@x.io', org: 'other', handle: 'bob' });
    const error = await serverError(users().create({ email: 'c@x.io', org: 'acme', handle: 'bob' }));
    expect(error.code).toBe(11000);
    expect(error.keyValue).toEqual({ org: 'acme', handle: 'bob' });
    expect(await users().countDocuments()).toBe(2);
  });

  it('create sets createdAt and updatedAt timestamps; updateOne moves updatedAt only', async () => {
    const created = await users().create({ email: 't@x.io', org: 'acme', handle: 't' });
    expect(created.createdAt).toBeInstanceOf(Date);
    expect(created.updatedAt).toBeInstanceOf(Date);
    const stored = await users().findById(created._id).lean();
    expect(stored?.createdAt).toEqual(created.createdAt);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await users().updateOne({ _id: created._id }, { $set: { age: 40 } });
    const after = await users().findById(created._id).lean();
    expect(after?.age).toBe(40);
    expect(after?.createdAt).toEqual(created.createdAt);
    expect(after?.updatedAt?.getTime()).toBeGreaterThan(
      created.updatedAt?.getTime() ?? Number.POSITIVE_INFINITY,
    );
  });

  it('findById(...).lean() returns a plain object with the ObjectId _id, defaults and __v', async () => {
    const created = await users().create({ email: 'l@x.io', org: 'acme', handle: 'l' });
    const lean = await users().findById(created._id).lean();
    expect(lean).not.toBeNull();
    expect(lean?._id).toBeInstanceOf(Types.ObjectId);
    expect(String(lean?._id)).toBe(String(created._id));
    expect(lean?.email).toBe('l@x.io');
    expect(lean?.tags).toEqual([]);
    expect((lean as unknown as { __v: number }).__v).toBe(0);
    expect(Object.keys(lean as object)[0]).toBe('_id');
  });

  it('findOne by field returns a hydrated document; a miss returns null', async () => {
    await users().create({ email: 'f@x.io', org: 'acme', handle: 'f', age: 30 });
    const doc = await users().findOne({ handle: 'f' });
    expect(doc?.email).toBe('f@x.io');
    expect(doc?.age).toBe(30);
    expect(await users().findOne({ handle: 'nobody' })).toBeNull();
  });

  it('updateOne answers matchedCount/modifiedCount; updating to the same value gives modifiedCount 0 on the server', async () => {
    await users().create({ email: 'u@x.io', org: 'acme', handle: 'u', age: 1 });
    const changed = await users().updateOne({ handle: 'u' }, { $set: { age: 2 } }, { timestamps: false });
    expect(changed.matchedCount).toBe(1);
    expect(changed.modifiedCount).toBe(1);
    const same = await users().updateOne({ handle: 'u' }, { $set: { age: 2 } }, { timestamps: false });
    expect(same.matchedCount).toBe(1);
    expect(same.modifiedCount).toBe(0);
  });

  it("findOneAndUpdate with returnDocument:'after' (the 'new: true' behaviour) returns the updated document", async () => {
    await users().create({ email: 'n@x.io', org: 'acme', handle: 'n', tags: ['x'] });
    const updated = await users()
      .findOneAndUpdate(
        { handle: 'n' },
        { $push: { tags: 'y' }, $inc: { age: 5 } },
        { returnDocument: 'after' },
      )
      .lean();
    expect(updated?.tags).toEqual(['x', 'y']);
    expect(updated?.age).toBe(5);
  });

  it('findOneAndUpdate into a duplicate unique email rejects with 11000 and keyValue', async () => {
    await users().create({ email: 'one@x.io', org: 'acme', handle: 'one' });
    await users().create({ email: 'two@x.io', org: 'acme', handle: 'two' });
    const error = await serverError(
      users()
        .findOneAndUpdate({ handle: 'two' }, { $set: { email: 'one@x.io' } }, { returnDocument: 'after' })
        .exec(),
    );
    expect(error.code).toBe(11000);
    expect(error.keyValue).toEqual({ email: 'one@x.io' });
    expect((await users().findOne({ handle: 'two' }).lean())?.email).toBe('two@x.io');
  });

  it('countDocuments and deleteMany agree on the matching documents', async () => {
    await users().insertMany([
      { email: '1@x.io', org: 'o1', handle: 'h1', age: 10 },
      { email: '2@x.io', org: 'o1', handle: 'h2', age: 20 },
      { email: '3@x.io', org: 'o2', handle: 'h3', age: 30 },
    ]);
    expect(await users().countDocuments({ org: 'o1' })).toBe(2);
    const removed = await users().deleteMany({ age: { $lt: 25 } });
    expect(removed.deletedCount).toBe(2);
    expect(await users().countDocuments()).toBe(1);
  });

  it('insertMany inserts every document with generated ObjectIds and timestamps', async () => {
    const docs = await users().insertMany([
      { email: 'm1@x.io', org: 'm', handle: 'm1' },
      { email: 'm2@x.io', org: 'm', handle: 'm2' },
    ]);
    expect(docs).toHaveLength(2);
    for (const doc of docs) {
      expect(doc._id).toBeInstanceOf(Types.ObjectId);
      expect(doc.createdAt).toBeInstanceOf(Date);
    }
    expect(await users().countDocuments({ org: 'm' })).toBe(2);
  });

  it('insertMany with a duplicate (ordered) rejects with 11000 and keeps the documents before it', async () => {
    const error = await serverError(
      users().insertMany([
        { email: 'd1@x.io', org: 'd', handle: 'd1' },
        { email: 'd1@x.io', org: 'd', handle: 'd2' },
        { email: 'd3@x.io', org: 'd', handle: 'd3' },
      ]),
    );
    expect(error.code).toBe(11000);
    expect(await users().countDocuments({ org: 'd' })).toBe(1);
  });

  it('populate replaces the referenced ObjectId with the Author document', async () => {
    const ursula = await authors().create({ name: 'Ursula' });
    const iain = await authors().create({ name: 'Iain' });
    await books().create([
      { title: 'The Dispossessed', author: ursula._id, year: 1974 },
      { title: 'Excession', author: iain._id, year: 1996 },
      { title: 'The Lathe of Heaven', author: ursula._id, year: 1971 },
    ]);
    const list = await books()
      .find({ author: ursula._id })
      .sort({ year: 1 })
      .populate<{ author: Author & { _id: Types.ObjectId } }>('author')
      .lean();
    expect(list.map((b) => b.title)).toEqual(['The Lathe of Heaven', 'The Dispossessed']);
    for (const book of list) {
      expect(book.author.name).toBe('Ursula');
      expect(String(book.author._id)).toBe(String(ursula._id));
    }
  });

  it('populate of a reference whose target was deleted yields null', async () => {
    const gone = await authors().create({ name: 'Gone' });
    const book = await books().create({ title: 'Orphan', author: gone._id, year: 2000 });
    await authors().deleteOne({ _id: gone._id });
    const populated = await books().findById(book._id).populate('author').lean();
    expect(populated?.author).toBeNull();
  });

  it('Model.createCollection() twice is fine and leaves one collection', async () => {
    const Temp = handle.connection.model('Temp', new Schema({ x: Number }));
    await Temp.createCollection();
    await Temp.createCollection();
    const names =
      (await handle.connection.db?.listCollections({ name: Temp.collection.collectionName }).toArray()) ?? [];
    expect(names).toHaveLength(1);
  });

  it('syncIndexes drops indexes the schema no longer declares and keeps the declared ones', async () => {
    await users().collection.createIndex({ age: 1 });
    const dropped = await users().syncIndexes();
    expect(dropped).toEqual(['age_1']);
    const names = (await users().collection.listIndexes().toArray()).map((i) => i.name as string).sort();
    expect(names).toEqual(['_id_', 'email_1', 'org_1_handle_1']);
  });
});
