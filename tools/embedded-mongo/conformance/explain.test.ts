// Which access a query takes, as `explain` reports it on a MongoDB 7.0 standalone: the stage
// names and the examined counts hold on mongod too (its plan may nest them under `queryPlan`).
import { connectDriver, type DriverHandle } from '@parametric/test-harness';
import type { Document } from 'mongodb';
import { type Doc, serverError } from './support';

/** Every stage object in a plan tree, depth first. */
function stages(plan: unknown): Document[] {
  if (plan === null || typeof plan !== 'object') return [];
  const node = plan as Document;
  const nested = Object.values(node).flatMap((value) =>
    Array.isArray(value) ? value.flatMap(stages) : stages(value),
  );
  return typeof node.stage === 'string' ? [node, ...nested] : nested;
}

const INDEX_STAGES = new Set(['IXSCAN', 'COUNT_SCAN']);

/** The index a plan reads (`IXSCAN`, or mongod's `COUNT_SCAN` for a count), or a collection scan. */
function accessOf(explained: Document): { stage: 'index'; indexName: string } | { stage: 'COLLSCAN' } {
  const all = stages(explained.queryPlanner.winningPlan);
  const scan = all.find((s) => INDEX_STAGES.has(s.stage) || s.stage === 'COLLSCAN');
  if (!scan)
    throw new Error(`no index or collection scan in ${JSON.stringify(explained.queryPlanner.winningPlan)}`);
  return scan.stage === 'COLLSCAN' ? { stage: 'COLLSCAN' } : { stage: 'index', indexName: scan.indexName };
}

describe('conformance: explain', () => {
  let handle: DriverHandle;
  const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));

  beforeAll(async () => {
    handle = await connectDriver('explain');
    // As `withOutbox` (libs/events) declares it: only documents with undelivered events.
    await handle.db
      .collection('outboxes')
      .createIndex({ outboxPending: 1 }, { partialFilterExpression: { outboxPending: true } });
    await handle.db.collection('outboxes').insertMany(
      Array.from({ length: 200 }, (_, i) => ({
        _id: i as never,
        outboxPending: i % 50 === 0,
        outbox: i % 50 === 0 ? [{ id: `evt-${i}` }] : [],
      })),
    );
    await handle.db.collection('deliveries').createIndex({ status: 1, nextAttemptAt: 1 });
    await handle.db.collection('deliveries').insertMany(
      Array.from({ length: 120 }, (_, i) => ({
        _id: i as never,
        status: i % 2 === 0 ? 'PENDING' : 'DELIVERED',
        nextAttemptAt: at(i),
      })),
    );
  });

  afterAll(async () => {
    await handle.close();
  });

  const outboxes = () => handle.db.collection<Doc>('outboxes');
  const deliveries = () => handle.db.collection<Doc>('deliveries');

  it("the outbox relay's query ({ outboxPending: true }, projected, limited) reads the partial index and only the pending documents", async () => {
    const explained = await outboxes()
      .find({ outboxPending: true }, { projection: { outbox: 1 } })
      .limit(100)
      .explain('executionStats');
    expect(accessOf(explained)).toEqual({ stage: 'index', indexName: 'outboxPending_1' });
    expect(explained.executionStats.nReturned).toBe(4);
    expect(explained.executionStats.totalDocsExamined).toBe(4);
  });

  it('a query that does not imply the partial filter scans the collection', async () => {
    const explained = await outboxes().find({ outboxPending: false }).explain('executionStats');
    expect(accessOf(explained)).toEqual({ stage: 'COLLSCAN' });
    expect(explained.executionStats.nReturned).toBe(196);
    expect(explained.executionStats.totalDocsExamined).toBe(200);
  });

  it('equality on the leading field and a range on the next read a compound index (the delivery reconciler’s query)', async () => {
    const explained = await deliveries()
      .find({ status: 'PENDING', nextAttemptAt: { $lte: at(9) } })
      .explain('executionStats');
    expect(accessOf(explained)).toEqual({ stage: 'index', indexName: 'status_1_nextAttemptAt_1' });
    expect(explained.executionStats.nReturned).toBe(5);
    expect(explained.executionStats.totalDocsExamined).toBe(5);
  });

  it('a range on the leading field alone reads the index', async () => {
    const explained = await deliveries()
      .find({ status: { $gt: 'E' } })
      .explain('executionStats');
    expect(accessOf(explained)).toEqual({ stage: 'index', indexName: 'status_1_nextAttemptAt_1' });
    expect(explained.executionStats.nReturned).toBe(60);
    expect(explained.executionStats.totalDocsExamined).toBe(60);
  });

  it('count explains its access too', async () => {
    const explained = await handle.db.command({
      explain: { count: 'outboxes', query: { outboxPending: true } },
      verbosity: 'executionStats',
    });
    expect(accessOf(explained)).toEqual({ stage: 'index', indexName: 'outboxPending_1' });
  });

  it('queryPlanner verbosity leaves out executionStats', async () => {
    const explained = await outboxes().find({ outboxPending: true }).explain('queryPlanner');
    expect(explained.queryPlanner.namespace).toBe(`${handle.db.databaseName}.outboxes`);
    expect(explained.executionStats).toBeUndefined();
  });

  it('an unknown verbosity is refused', async () => {
    const error = await serverError(
      handle.db.command({ explain: { find: 'outboxes', filter: {} }, verbosity: 'everything' }),
    );
    expect(error.codeName).toBe('BadValue');
  });
});
