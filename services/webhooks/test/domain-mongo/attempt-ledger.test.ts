import { randomBytes, randomUUID } from 'node:crypto';
import { createLogger } from '@parametric/logger';
import { createProducer, type Producer } from '@parametric/queue';
import {
  connectMongoose,
  type MongooseHandle,
  outcome,
  testRedisUrl,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import { type AttemptRecord, attemptIdOf, createAttemptLedger } from '../../src/deliveries/attempts';
import { getDelivery } from '../../src/deliveries/domain';
import { createDeliverer, type Deliverer } from '../../src/delivery/deliverer';
import { createSender } from '../../src/delivery/send';
import { guardedLookup } from '../../src/delivery/target-guard';
import { setWebhookUrl } from '../../src/endpoints/domain';
import { type WebhookRepositories, webhookRepositories } from '../../src/repositories';

/**
 * The attempt ledger and the deliverer's writes to it, on the run's MongoDB and Redis (no
 * HTTP): the partner's endpoint is a blocked address, which the sender refuses without a
 * connection, so every attempt here is a failed one with the target guard's error.
 */

const keys = { secretKey: randomBytes(32).toString('base64'), allowInsecure: false };
const prefix = uniqueRedisPrefix('webhooks_ledger');
/** Public at configuration time; the stored URL is then moved to a private address. */
const PUBLIC_URL = 'https://93.184.215.14/hooks';
const BLOCKED_URL = 'https://10.0.0.5/hooks';
const REFUSED = 'webhook URL resolves to a blocked address';

let handle: MongooseHandle;
let repositories: WebhookRepositories;
let producer: Producer<'webhook-deliveries'>;
let deliverer: Deliverer;
let sender: ReturnType<typeof createSender>;

beforeAll(async () => {
  handle = await connectMongoose('webhooks_ledger');
  repositories = webhookRepositories(handle.connection);
  await repositories.init();
  producer = createProducer('webhook-deliveries', { connection: testRedisUrl(), prefix });
  sender = createSender({ timeoutMs: 1_000, lookup: guardedLookup(keys), allowInsecure: false });
  deliverer = createDeliverer({
    ...repositories.acrossOrganizations(),
    sender,
    producer,
    logger: createLogger({ name: 'webhooks-ledger', level: 'silent' }),
    secretKey: keys.secretKey,
    backoffMs: [60_000],
    maxAttempts: 5,
    perOrganizationConcurrency: 2,
  });
});

afterAll(async () => {
  await deliverer.close();
  sender.close();
  await producer.close();
  await handle.close();
});

/** An organization whose endpoint now points at a blocked address (as after DNS rebinding). */
async function blockedOrganization() {
  const organizationId = randomUUID();
  const tenant = repositories.forOrganization(organizationId);
  await setWebhookUrl(tenant, PUBLIC_URL, keys);
  await repositories.acrossOrganizations().endpoints.updateOne({ _id: organizationId }, { url: BLOCKED_URL });
  return { organizationId, tenant };
}

function attemptOf(
  deliveryId: string,
  organizationId: string,
  cycle: number,
  attempt: number,
  minute: number,
): AttemptRecord {
  return {
    _id: attemptIdOf({ deliveryId, cycle, attempt }),
    deliveryId,
    organizationId,
    cycle,
    attempt,
    attemptedAt: new Date(Date.UTC(2026, 10, 1, 0, minute)),
    url: PUBLIC_URL,
    responseStatus: 500,
    error: 'HTTP 500',
    durationMs: 12,
    outcome: 'FAILED',
  };
}

/** A PENDING delivery row as the deliverer leaves it after counting `last` (its ledger write lost). */
async function rowAfter(last: AttemptRecord) {
  await repositories.acrossOrganizations().deliveries.collection.insertOne({
    _id: last.deliveryId,
    organizationId: last.organizationId,
    event: 'kyb.verified',
    body: '{}',
    url: last.url,
    status: 'PENDING',
    attempts: last.attempt,
    cycle: last.cycle,
    responseStatus: last.responseStatus,
    lastError: last.error,
    deliveredAt: null,
    nextAttemptAt: new Date(),
    lastAttempt: last,
    createdAt: new Date(Date.UTC(2026, 10, 1)),
    updatedAt: new Date(),
  } as never);
}

const ledgerOf = (deliveryId: string) =>
  repositories.acrossOrganizations().attempts.find({ deliveryId }).sort({ attemptedAt: 1 }).lean();

describe('the attempt ledger', () => {
  it('records one attempt once, however often and however concurrently it is written, and never rewrites it', async () => {
    const ledger = createAttemptLedger(repositories.acrossOrganizations().attempts);
    const first = attemptOf(randomUUID(), randomUUID(), 0, 1, 0);
    await Promise.all([ledger.record(first), ledger.record(first)]);
    await ledger.record(first);
    // A second write of the same attempt with other values (a re-run) changes nothing.
    await ledger.record({ ...first, responseStatus: 200, error: null, outcome: 'DELIVERED' });
    const rows = await ledgerOf(first.deliveryId);
    expect(rows).toEqual([first]);
  });

  it('records a refused target as an attempt with the guard’s error, and the next one after it', async () => {
    const { organizationId } = await blockedOrganization();
    const deliveryId = randomUUID();
    await repositories.acrossOrganizations().deliveries.create({
      _id: deliveryId,
      organizationId,
      event: 'kyb.verified',
      body: '{}',
      status: 'PENDING',
      attempts: 0,
    });
    await deliverer.first({
      _id: deliveryId,
      organizationId,
      event: 'kyb.verified',
      body: '{}',
      status: 'PENDING',
      cycle: 0,
      attempts: 0,
    });
    await deliverer.attempt({ deliveryId, cycle: 0, attempt: 2 });
    const rows = await ledgerOf(deliveryId);
    expect(rows.map((r) => [r._id, r.organizationId, r.url, r.responseStatus, r.error, r.outcome])).toEqual([
      [`${deliveryId}_0_1`, organizationId, BLOCKED_URL, null, REFUSED, 'FAILED'],
      [`${deliveryId}_0_2`, organizationId, BLOCKED_URL, null, REFUSED, 'FAILED'],
    ]);
    expect(rows.every((r) => Number.isInteger(r.durationMs) && r.durationMs >= 0)).toBe(true);
    const row = await repositories.acrossOrganizations().deliveries.findById(deliveryId).lean();
    expect([row?.status, row?.attempts, row?.lastError]).toEqual(['PENDING', 2, REFUSED]);
  });

  it('an attempt whose ledger write was lost (a crash after the row counted it) is shown, then copied before the next attempt counts', async () => {
    const { organizationId, tenant } = await blockedOrganization();
    const deliveryId = randomUUID();
    const lost = attemptOf(deliveryId, organizationId, 0, 1, 0);
    await rowAfter(lost);
    expect(await ledgerOf(deliveryId)).toEqual([]);

    // The read shows it from the row meanwhile.
    const before = await getDelivery(tenant, deliveryId);
    expect(before.attemptHistory.map((a) => [a.cycle, a.attempt, a.responseStatus])).toEqual([[0, 1, 500]]);

    await deliverer.attempt({ deliveryId, cycle: 0, attempt: 2 });
    expect((await ledgerOf(deliveryId)).map((r) => [r._id, r.error])).toEqual([
      [`${deliveryId}_0_1`, 'HTTP 500'],
      [`${deliveryId}_0_2`, REFUSED],
    ]);
    const after = await getDelivery(tenant, deliveryId);
    expect(after.attemptHistory.map((a) => [a.cycle, a.attempt, a.error])).toEqual([
      [0, 1, 'HTTP 500'],
      [0, 2, REFUSED],
    ]);
    expect(after.attempts).toBe(2);
  });

  it('the first attempt of a manual retry copies the previous cycle’s last attempt first, when its ledger write was lost', async () => {
    const { organizationId, tenant } = await blockedOrganization();
    const deliveryId = randomUUID();
    const lost = attemptOf(deliveryId, organizationId, 0, 5, 0);
    await rowAfter(lost);
    // What a manual retry leaves: the next cycle, PENDING, no attempt yet (lastAttempt untouched).
    const { deliveries } = repositories.acrossOrganizations();
    await deliveries.updateOne({ _id: deliveryId }, { $set: { attempts: 0 }, $inc: { cycle: 1 } });
    const row = await deliveries.collection.findOne({ _id: deliveryId } as never);
    await deliverer.first(row as never);
    const history = (await getDelivery(tenant, deliveryId)).attemptHistory;
    expect(history.map((a) => [a.cycle, a.attempt, a.error])).toEqual([
      [0, 5, 'HTTP 500'],
      [1, 1, REFUSED],
    ]);
    expect((await ledgerOf(deliveryId)).map((r) => r._id)).toEqual([
      `${deliveryId}_0_5`,
      `${deliveryId}_1_1`,
    ]);
  });

  it('a job run again after its attempt counted sends nothing and adds no second row', async () => {
    const { organizationId } = await blockedOrganization();
    const deliveryId = randomUUID();
    const counted = attemptOf(deliveryId, organizationId, 2, 3, 0);
    await rowAfter(counted);
    await deliverer.attempt({ deliveryId, cycle: 2, attempt: 3 });
    await deliverer.attempt({ deliveryId, cycle: 2, attempt: 3 });
    expect(await ledgerOf(deliveryId)).toEqual([counted]);
    const row = await repositories.acrossOrganizations().deliveries.findById(deliveryId).lean();
    expect([row?.attempts, row?.lastError]).toEqual([3, 'HTTP 500']);
  });

  it('shows the history of the caller’s deliveries only: another organization’s is 404 NOT_FOUND', async () => {
    const organizationId = randomUUID();
    const deliveryId = randomUUID();
    const earlier = attemptOf(deliveryId, organizationId, 0, 5, 0);
    await repositories.acrossOrganizations().attempts.collection.insertOne(earlier as never);
    await rowAfter(attemptOf(deliveryId, organizationId, 1, 1, 9));
    const own = await getDelivery(repositories.forOrganization(organizationId), deliveryId);
    expect(own.attemptHistory.map((a) => [a.cycle, a.attempt])).toEqual([
      [0, 5],
      [1, 1],
    ]);
    const stranger = repositories.forOrganization(randomUUID());
    expect((await outcome(getDelivery(stranger, deliveryId))).code).toBe('NOT_FOUND');
    expect((await outcome(getDelivery(stranger, randomUUID()))).code).toBe('NOT_FOUND');
  });
});
