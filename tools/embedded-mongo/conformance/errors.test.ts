// Error codes and shapes for malformed queries, commands and namespaces (MongoDB 7.0 standalone).
import { connectDriver, type DriverHandle } from '@parametric/test-harness';
import type { Document } from 'mongodb';
import { type Doc, serverError } from './support';

describe('conformance: errors', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('errors');
    await handle.db.collection<Doc>('data').insertMany([{ a: 1 }, { a: 2 }]);
  });

  afterAll(async () => {
    await handle.close();
  });

  const data = () => handle.db.collection<Doc>('data');

  describe('query errors', () => {
    it('an unknown field operator ({ a: { $foo: 1 } }) fails with code 2 BadValue "unknown operator: $foo"', async () => {
      const error = await serverError(
        data()
          .find({ a: { $foo: 1 } })
          .toArray(),
      );
      expect(error.code).toBe(2);
      expect(error.codeName).toBe('BadValue');
      expect(error.message).toBe('unknown operator: $foo');
      expect((error.errorResponse as Document).ok).toBe(0);
    });

    it('an unknown top-level operator ({ $foo: 1 }) fails with code 2 BadValue "unknown top level operator: $foo..."', async () => {
      const error = await serverError(
        data()
          .find({ $foo: 1 } as Document)
          .toArray(),
      );
      expect(error.code).toBe(2);
      expect(error.codeName).toBe('BadValue');
      expect(error.message.startsWith('unknown top level operator: $foo')).toBe(true);
    });

    it('the same unknown operator in a count, a delete filter and an update filter fails with code 2 too', async () => {
      expect((await serverError(data().countDocuments({ a: { $foo: 1 } }))).code).toBe(2);
      expect((await serverError(data().deleteMany({ a: { $foo: 1 } }))).code).toBe(2);
      expect((await serverError(data().updateMany({ a: { $foo: 1 } }, { $set: { b: 1 } }))).code).toBe(2);
      expect(await data().countDocuments()).toBe(2);
    });

    it('$in with a non-array fails with code 2 BadValue "$in needs an array"', async () => {
      const error = await serverError(
        data()
          .find({ a: { $in: 5 } } as Document)
          .toArray(),
      );
      expect(error.code).toBe(2);
      expect(error.message).toBe('$in needs an array');
    });

    it('$and with a non-array fails with code 2 BadValue', async () => {
      const error = await serverError(
        data()
          .find({ $and: { a: 1 } } as Document)
          .toArray(),
      );
      expect(error.code).toBe(2);
      expect(error.codeName).toBe('BadValue');
    });

    it('an invalid $regex pattern fails with code 51091', async () => {
      const error = await serverError(
        data()
          .find({ a: { $regex: '(' } })
          .toArray(),
      );
      expect(error.code).toBe(51091);
      expect(error.message.startsWith('Regular expression is invalid')).toBe(true);
    });

    it('a sort value other than 1/-1 fails with code 15975 "$sort key ordering must be 1 (for ascending) or -1 (for descending)"', async () => {
      const error = await serverError(handle.db.command({ find: 'data', sort: { a: 2 } }));
      expect(error.code).toBe(15975);
      expect(error.message).toBe('$sort key ordering must be 1 (for ascending) or -1 (for descending)');
    });

    it("a negative skip fails with code 51024 \"BSON field 'skip' value must be >= 0, actual value '-1'\"", async () => {
      const error = await serverError(handle.db.command({ find: 'data', skip: -1 }));
      expect(error.code).toBe(51024);
      expect(error.message).toBe("BSON field 'skip' value must be >= 0, actual value '-1'");
    });
  });

  describe('command shape errors', () => {
    it('a missing required field fails with code 40414 "BSON field \'insert.documents\' is missing but a required field"', async () => {
      const error = await serverError(handle.db.command({ insert: 'data' }));
      expect(error.code).toBe(40414);
      expect(error.message).toBe("BSON field 'insert.documents' is missing but a required field");
    });

    it('an unknown top-level field fails with code 40415 "BSON field \'insert.bogusOption\' is an unknown field." and writes nothing', async () => {
      const error = await serverError(
        handle.db.command({ insert: 'data', documents: [{ a: 'never' }], bogusOption: 1 }),
      );
      expect(error.code).toBe(40415);
      expect(error.message).toBe("BSON field 'insert.bogusOption' is an unknown field.");
      expect(await data().countDocuments({ a: 'never' })).toBe(0);
    });

    it('a field of the wrong type fails with code 14 TypeMismatch', async () => {
      const error = await serverError(handle.db.command({ find: 'data', limit: 'ten' }));
      expect(error.code).toBe(14);
      expect(error.codeName).toBe('TypeMismatch');
    });

    it('a failed command answers the error document { ok: 0, errmsg, code, codeName }', async () => {
      const error = await serverError(handle.db.command({ find: 'data', filter: { a: { $foo: 1 } } }));
      const reply = error.errorResponse as Document;
      expect(reply.ok).toBe(0);
      expect(reply.errmsg).toBe('unknown operator: $foo');
      expect(reply.code).toBe(2);
      expect(reply.codeName).toBe('BadValue');
    });
  });

  describe('namespace errors', () => {
    it('inserting into a collection name containing $ fails with code 73 InvalidNamespace', async () => {
      const error = await serverError(handle.db.collection<Doc>('bad$name').insertOne({ a: 1 }));
      expect(error.code).toBe(73);
      const names = (await handle.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
      expect(names).not.toContain('bad$name');
    });

    it('creating a collection whose name contains $ fails with code 73 InvalidNamespace', async () => {
      const error = await serverError(handle.db.command({ create: 'bad$create' }));
      expect(error.code).toBe(73);
      expect(error.codeName).toBe('InvalidNamespace');
      expect(error.message).toContain('bad$create');
    });

    it('find on an empty collection name fails with code 73 InvalidNamespace', async () => {
      const error = await serverError(handle.db.command({ find: '' }));
      expect(error.code).toBe(73);
      expect(error.codeName).toBe('InvalidNamespace');
    });

    it('count and findAndModify on an empty collection name fail with code 73 "Invalid namespace specified \'<db>.\'"', async () => {
      const expected = `Invalid namespace specified '${handle.db.databaseName}.'`;
      const count = await serverError(handle.db.command({ count: '' }));
      expect(count.code).toBe(73);
      expect(count.codeName).toBe('InvalidNamespace');
      expect(count.message).toBe(expected);
      const fam = await serverError(handle.db.command({ findAndModify: '', query: {}, remove: true }));
      expect(fam.code).toBe(73);
      expect(fam.message).toBe(expected);
    });

    it('aggregate on an empty collection name fails with code 73 InvalidNamespace', async () => {
      const aggregate = await serverError(handle.db.command({ aggregate: '', pipeline: [], cursor: {} }));
      expect(aggregate.code).toBe(73);
      expect(aggregate.codeName).toBe('InvalidNamespace');
    });
  });
});
