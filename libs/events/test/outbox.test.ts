import { randomUUID } from 'node:crypto';
import { connectMongoose, type MongooseHandle } from '@parametric/test-harness';
import { type Model, Schema } from 'mongoose';
import {
  createEvent,
  exampleData,
  type OutboxFields,
  outboxInsert,
  outboxUpdate,
  withOutbox,
  withOutboxEvents,
} from '../src';

interface Organization extends OutboxFields {
  _id: string;
  name: string;
  kybStatus: string;
}

let mongo: MongooseHandle;
let Organizations: Model<Organization>;

beforeAll(async () => {
  mongo = await connectMongoose('events_outbox');
  const schema = withOutbox(
    new Schema<Organization>(
      { _id: { type: String, default: () => randomUUID() }, name: String, kybStatus: String },
      { timestamps: true },
    ),
  );
  Organizations = mongo.connection.model<Organization>('Organization', schema);
  await Organizations.init();
});

afterAll(async () => {
  await mongo.close();
});

function raw(id: string) {
  return mongo.connection.db?.collection('organizations').findOne({ _id: id as never });
}

describe('outbox on a mongoose schema', () => {
  it('starts empty and not pending', async () => {
    const org = await Organizations.create({ name: 'Acme', kybStatus: 'NOT_STARTED' });
    expect(await raw(org._id)).toMatchObject({ outbox: [], outboxPending: false });
  });

  it('indexes only pending documents, for the relay query', async () => {
    const indexes = await Organizations.collection.indexes();
    expect(indexes).toContainEqual(
      expect.objectContaining({
        key: { outboxPending: 1 },
        partialFilterExpression: { outboxPending: true },
      }),
    );
  });

  it('records the state change and its event in one update, the event stored exactly as created', async () => {
    const org = await Organizations.create({ name: 'Acme', kybStatus: 'NOT_STARTED' });
    const event = createEvent('kyb.verified', org._id, { organizationId: org._id, kybStatus: 'VERIFIED' });

    const updated = await Organizations.findOneAndUpdate(
      { _id: org._id, kybStatus: 'NOT_STARTED' },
      withOutboxEvents({ $set: { kybStatus: 'VERIFIED' } }, event),
      { returnDocument: 'after' },
    );

    expect(updated?.kybStatus).toBe('VERIFIED');
    const stored = await raw(org._id);
    expect(stored).toMatchObject({ kybStatus: 'VERIFIED', outboxPending: true });
    expect(stored?.outbox).toEqual([event]);
  });

  it('a filtered-out update writes neither the change nor the event', async () => {
    const org = await Organizations.create({ name: 'Acme', kybStatus: 'VERIFIED' });
    const event = createEvent('kyb.verified', org._id, { organizationId: org._id, kybStatus: 'VERIFIED' });
    await Organizations.updateOne(
      { _id: org._id, kybStatus: 'NOT_STARTED' },
      withOutboxEvents({ kybStatus: 'VERIFIED' }, event),
    );
    expect(await raw(org._id)).toMatchObject({ outbox: [], outboxPending: false });
  });

  it('outboxUpdate is exactly the fragment to merge', () => {
    const orgId = randomUUID();
    const event = createEvent('kyb.verified', orgId, { organizationId: orgId, kybStatus: 'VERIFIED' });
    expect(outboxUpdate(event)).toEqual({ $set: { outboxPending: true }, $push: { outbox: event } });
  });

  it('withOutboxEvents keeps the caller operators, folds plain fields into $set and pushes several events', () => {
    const orgId = randomUUID();
    const examples = exampleData(orgId);
    const a = createEvent('payout.completed', orgId, examples['payout.completed']);
    const b = createEvent('payout.failed', orgId, examples['payout.failed']);
    expect(withOutboxEvents({ status: 'DONE', $inc: { attempts: 1 }, $push: { log: 'x' } }, a, b)).toEqual({
      $inc: { attempts: 1 },
      $set: { status: 'DONE', outboxPending: true },
      $push: { log: 'x', outbox: { $each: [a, b] } },
    });
  });

  it('withOutboxEvents refuses an update that already writes the outbox', () => {
    const orgId = randomUUID();
    const event = createEvent('kyb.verified', orgId, { organizationId: orgId, kybStatus: 'VERIFIED' });
    expect(() => withOutboxEvents(outboxUpdate(event), event)).toThrow(/already writes the outbox/);
  });

  it('a document created with its events keeps them intact, empty objects included', async () => {
    const orgId = randomUUID();
    const overdue = createEvent('determination.settlement_report_overdue', orgId, {
      ...exampleData(orgId)['determination.settlement_report_overdue'],
      links: {},
    });
    const org = await Organizations.create({
      _id: orgId,
      name: 'Acme',
      kybStatus: 'NOT_STARTED',
      ...outboxInsert(overdue),
    });
    const stored = await raw(org._id);
    expect(stored).toMatchObject({ outboxPending: true });
    expect(stored?.outbox).toEqual([overdue]);
  });
});
