// Multi-document transactions need a replica set or mongos: a MongoDB 7.0 standalone refuses them.
import { connectDriver, type DriverHandle } from '@parametric/test-harness';
import { type Document, MongoServerError } from 'mongodb';
import { type Doc, serverError } from './support';

const STANDALONE_TXN_MESSAGE = 'Transaction numbers are only allowed on a replica set member or mongos';

/**
 * The server's own reply. For write commands the driver (7.x) replaces an IllegalOperation (code 20) reply
 * with its own "does not support retryable writes" error and keeps the server's error as `originalError`.
 */
function serverReply(error: MongoServerError): MongoServerError {
  const original: unknown = (error as { originalError?: unknown }).originalError;
  return original instanceof MongoServerError ? original : error;
}

describe('conformance: transactions on a standalone', () => {
  let handle: DriverHandle;

  beforeAll(async () => {
    handle = await connectDriver('transactions');
  });

  afterAll(async () => {
    await handle.close();
  });

  it('session.withTransaction with an insert fails with code 20 IllegalOperation and writes nothing', async () => {
    const coll = handle.db.collection<Doc>('txn_with');
    const session = handle.client.startSession();
    try {
      const error = serverReply(
        await serverError(
          session.withTransaction(async () => {
            await coll.insertOne({ _id: 1, in: 'txn' } as Document, { session });
          }),
        ),
      );
      expect(error.code).toBe(20);
      expect(error.codeName).toBe('IllegalOperation');
      expect(error.message).toBe(STANDALONE_TXN_MESSAGE);
    } finally {
      await session.endSession();
    }
    expect(await coll.countDocuments()).toBe(0);
    expect(await coll.findOne({ _id: 1 } as Document)).toBeNull();
  });

  it('startTransaction then insertOne in the session fails with code 20 IllegalOperation and nothing is written', async () => {
    const coll = handle.db.collection<Doc>('txn_manual');
    await coll.insertOne({ _id: 'before' } as Document);
    const session = handle.client.startSession();
    try {
      session.startTransaction();
      const error = serverReply(
        await serverError(coll.insertOne({ _id: 'inside' } as Document, { session })),
      );
      expect(error.code).toBe(20);
      expect(error.codeName).toBe('IllegalOperation');
      await session.abortTransaction().catch(() => undefined);
    } finally {
      await session.endSession();
    }
    expect(await coll.find().toArray()).toEqual([{ _id: 'before' }]);
  });

  it('an update inside a started transaction fails with code 20 and leaves the document unchanged', async () => {
    const coll = handle.db.collection<Doc>('txn_update');
    await coll.insertOne({ _id: 1, v: 1 } as Document);
    const session = handle.client.startSession();
    try {
      session.startTransaction();
      const error = serverReply(
        await serverError(coll.updateOne({ _id: 1 } as Document, { $set: { v: 2 } }, { session })),
      );
      expect(error.code).toBe(20);
      await session.abortTransaction().catch(() => undefined);
    } finally {
      await session.endSession();
    }
    expect(await coll.findOne({ _id: 1 } as Document)).toEqual({ _id: 1, v: 1 });
  });

  it('a find inside a started transaction fails with code 20 IllegalOperation', async () => {
    const coll = handle.db.collection<Doc>('txn_read');
    await coll.insertOne({ _id: 1 } as Document);
    const session = handle.client.startSession();
    try {
      session.startTransaction();
      const error = serverReply(await serverError(coll.find({}, { session }).toArray()));
      expect(error.code).toBe(20);
      expect(error.codeName).toBe('IllegalOperation');
      expect(error.message).toBe(STANDALONE_TXN_MESSAGE);
      await session.abortTransaction().catch(() => undefined);
    } finally {
      await session.endSession();
    }
  });
});
