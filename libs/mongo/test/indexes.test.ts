import { connectMongo, declaredIndexes, migrateIndexes, missingUniqueIndexes } from '@parametric/mongo';
import { testMongoUrl, uniqueDatabaseName } from '@parametric/test-harness';
import { type Connection, Schema } from 'mongoose';

/** A service's models as they are declared: a unique compound index, a partial unique one, a TTL one. */
function models(connection: Connection) {
  const accounts = new Schema({
    organizationId: { type: String, required: true },
    externalRef: { type: String, required: true },
    email: String,
  });
  accounts.index({ organizationId: 1, externalRef: 1 }, { unique: true });
  accounts.index(
    { email: 1 },
    { unique: true, partialFilterExpression: { email: { $type: 'string' } }, name: 'email_unique' },
  );
  const sessions = new Schema({ expiresAt: Date, userId: String });
  sessions.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
  sessions.index({ userId: 1 });
  return [
    connection.models.Account ?? connection.model('Account', accounts, 'accounts'),
    connection.models.Session ?? connection.model('Session', sessions, 'sessions'),
  ];
}

const indexNames = async (connection: Connection, collection: string) =>
  (await connection.collection(collection).listIndexes().toArray()).map((index) => index.name).sort();

describe('index migrations', () => {
  let connection: Connection;
  beforeEach(async () => {
    connection = await connectMongo({
      url: testMongoUrl(),
      dbName: uniqueDatabaseName('mongo_indexes'),
      autoIndex: false,
    });
  });
  afterEach(async () => {
    await connection.dropDatabase();
    await connection.close();
  });

  it('with autoIndex off nothing is built; the unique indexes are reported missing until migrate creates every declared index', async () => {
    const declared = models(connection);
    await Promise.all(declared.map((model) => model.init()));
    expect(
      (await missingUniqueIndexes(connection, declared)).map((index) => `${index.collection}.${index.name}`),
    ).toEqual(['accounts.organizationId_1_externalRef_1', 'accounts.email_unique']);

    const report = await migrateIndexes(connection, declared);
    expect(report.created.map((index) => `${index.collection}.${index.name}`)).toEqual([
      'accounts.organizationId_1_externalRef_1',
      'accounts.email_unique',
      'sessions.expiresAt_1',
      'sessions.userId_1',
    ]);
    expect([report.present, report.conflicts, report.undeclared]).toEqual([[], [], []]);
    expect(await missingUniqueIndexes(connection, declared)).toEqual([]);

    const accounts = await connection.collection('accounts').listIndexes().toArray();
    expect(accounts.find((index) => index.name === 'email_unique')).toMatchObject({
      key: { email: 1 },
      unique: true,
      partialFilterExpression: { email: { $type: 'string' } },
    });
    const sessions = await connection.collection('sessions').listIndexes().toArray();
    expect(sessions.find((index) => index.name === 'expiresAt_1')).toMatchObject({ expireAfterSeconds: 0 });
    // The unique index is enforced: a duplicate is refused.
    await connection.collection('accounts').insertOne({ organizationId: 'o', externalRef: 'r' });
    await expect(
      connection.collection('accounts').insertOne({ organizationId: 'o', externalRef: 'r' }),
    ).rejects.toMatchObject({ code: 11000 });
  });

  it('is idempotent and drops nothing: a second run creates nothing, and an index no schema declares stays', async () => {
    const declared = models(connection);
    await migrateIndexes(connection, declared);
    await connection.collection('sessions').createIndex({ userId: 1, expiresAt: -1 }, { name: 'by_hand' });

    const again = await migrateIndexes(connection, declared);
    expect(again.created).toEqual([]);
    expect(again.present).toHaveLength(declaredIndexes(declared).length);
    expect(again.conflicts).toEqual([]);
    expect(again.undeclared).toEqual([{ collection: 'sessions', name: 'by_hand' }]);
    expect(await indexNames(connection, 'sessions')).toEqual(['_id_', 'by_hand', 'expiresAt_1', 'userId_1']);
  });

  it('an index in the way (the same name, not unique) is a conflict left as it is, and the unique index counts as missing', async () => {
    const declared = models(connection);
    await connection
      .collection('accounts')
      .createIndex({ organizationId: 1, externalRef: 1 }, { name: 'organizationId_1_externalRef_1' });

    const report = await migrateIndexes(connection, declared);
    expect(report.conflicts.map(({ index }) => index.name)).toEqual(['organizationId_1_externalRef_1']);
    expect(report.created.map((index) => index.name)).toEqual(['email_unique', 'expiresAt_1', 'userId_1']);
    const kept = (await connection.collection('accounts').listIndexes().toArray()).find(
      (index) => index.name === 'organizationId_1_externalRef_1',
    );
    expect(kept?.unique).toBeUndefined();
    expect((await missingUniqueIndexes(connection, declared)).map((index) => index.name)).toEqual([
      'organizationId_1_externalRef_1',
    ]);
  });
});
