import { randomBytes, randomUUID } from 'node:crypto';
import { createEvent, type EventEnvelope } from '@parametric/events';
import { createLogger } from '@parametric/logger';
import { createProducer, type Producer } from '@parametric/queue';
import {
  connectMongoose,
  type MongooseHandle,
  outcome,
  testMongoUrl,
  testRedisUrl,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import { Queue } from 'bullmq';
import mongoose from 'mongoose';
import {
  deliveryRowOf,
  listDeliveries,
  RELEASE_PAGE,
  releaseWaiting,
  retryDelivery,
  sendTestEvent,
} from '../../src/deliveries/domain';
import { createEventConsumer } from '../../src/delivery/consumer';
import { createDeliverer, type Deliverer } from '../../src/delivery/deliverer';
import { endpointReader, uncachedEndpoints } from '../../src/delivery/endpoints';
import { forgottenFilter, startReconciler } from '../../src/delivery/reconciler';
import { createSender } from '../../src/delivery/send';
import { guardedLookup } from '../../src/delivery/target-guard';
import { rotateSigningSecret, setWebhookUrl, webhookConfig } from '../../src/endpoints/domain';
import { type WebhookRepositories, webhookRepositories } from '../../src/repositories';

/** The webhooks service's domain functions called directly on the run's MongoDB and Redis (no HTTP). */

const keys = { secretKey: randomBytes(32).toString('base64'), allowInsecure: false };
const prefix = uniqueRedisPrefix('webhooks_domain');
let handle: MongooseHandle;
let repositories: WebhookRepositories;
let producer: Producer<'webhook-deliveries'>;
let deliverer: Deliverer;
let sender: ReturnType<typeof createSender>;

beforeAll(async () => {
  handle = await connectMongoose('webhooks_domain');
  repositories = webhookRepositories(handle.connection);
  await repositories.init();
  producer = createProducer('webhook-deliveries', { connection: testRedisUrl(), prefix });
  sender = createSender({ timeoutMs: 1_000, lookup: guardedLookup(keys), allowInsecure: false });
  deliverer = createDeliverer({
    ...repositories.acrossOrganizations(),
    sender,
    producer,
    logger: createLogger({ name: 'webhooks-domain', level: 'silent' }),
    secretKey: keys.secretKey,
    backoffMs: [50],
    maxAttempts: 5,
    perOrganizationConcurrency: 2,
  });
});

afterAll(async () => {
  sender.close();
  await producer.close();
  await handle.close();
});

/** A public address literal: the SSRF rules pass it without DNS. */
const PUBLIC_URL = 'https://93.184.215.14/hooks';

describe('webhook configuration', () => {
  it('generates a secret with the first URL, keeps it when the URL changes, and stores it sealed', async () => {
    const tenant = repositories.forOrganization(randomUUID());
    expect(await webhookConfig(tenant, keys)).toEqual({ url: null, secretSet: false, secret: null });
    const first = await setWebhookUrl(tenant, PUBLIC_URL, keys);
    expect(first.secret).toMatch(/^whsec_/);
    const second = await setWebhookUrl(tenant, 'https://93.184.215.14/other', keys);
    expect([second.url, second.secret]).toEqual(['https://93.184.215.14/other', first.secret]);
    const stored = await tenant.endpoint.get();
    expect(JSON.stringify(stored)).not.toContain(first.secret as string);
  });

  it('two first-time configurations racing end with one secret', async () => {
    const tenant = repositories.forOrganization(randomUUID());
    const [a, b] = await Promise.all([
      setWebhookUrl(tenant, PUBLIC_URL, keys),
      setWebhookUrl(tenant, PUBLIC_URL, keys),
    ]);
    expect(a.secret).toBe(b.secret);
    expect((await webhookConfig(tenant, keys)).secret).toBe(a.secret);
  });

  it.each([
    ['http://93.184.215.14/hooks', 'plain http'],
    ['https://10.0.0.5/hooks', 'a private address'],
    ['https://169.254.169.254/latest', 'cloud metadata'],
  ])('refuses %s (%s) with 400 on the url field and stores nothing', async (url) => {
    const tenant = repositories.forOrganization(randomUUID());
    const err = await outcome(setWebhookUrl(tenant, url, keys));
    expect([err.code, (err.details as { field: string }[])[0]?.field]).toEqual(['INVALID_INPUT', 'url']);
    expect(await tenant.endpoint.get()).toBeNull();
  });

  it('rotates the secret only when a URL is configured', async () => {
    const tenant = repositories.forOrganization(randomUUID());
    expect((await outcome(rotateSigningSecret(tenant, keys))).code).toBe('INVALID_INPUT');
    const { secret } = await setWebhookUrl(tenant, PUBLIC_URL, keys);
    const rotated = await rotateSigningSecret(tenant, keys);
    expect(rotated.secret).not.toBe(secret);
    expect((await webhookConfig(tenant, keys)).secret).toBe(rotated.secret);
  });
});

describe('the delivery log and manual retry', () => {
  const organizationId = randomUUID();
  const tenant = () => repositories.forOrganization(organizationId);
  const ids: string[] = [];

  beforeAll(async () => {
    const { deliveries } = repositories.acrossOrganizations();
    for (let i = 0; i < 5; i++) {
      const id = randomUUID();
      ids.push(id);
      await deliveries.create({
        _id: id,
        organizationId,
        event: 'kyb.verified',
        body: '{}',
        url: PUBLIC_URL,
        status: i % 2 === 0 ? 'FAILED' : 'DELIVERED',
        attempts: 5,
        createdAt: new Date(Date.UTC(2026, 10, 1, 0, i)),
      });
    }
  });

  it('pages newest first and filters by status', async () => {
    const page = await listDeliveries(tenant(), { page: 1, limit: 2 });
    expect([page.total, page.deliveries.map((d) => d.id)]).toEqual([5, [ids[4], ids[3]]]);
    const failed = await listDeliveries(tenant(), { page: 1, limit: 100, status: 'FAILED' });
    expect(failed.deliveries.map((d) => d.id).sort()).toEqual([ids[0], ids[2], ids[4]].sort());
  });

  it("sees nothing of another organization's log", async () => {
    const other = await listDeliveries(repositories.forOrganization(randomUUID()), { page: 1, limit: 100 });
    expect([other.total, other.deliveries]).toEqual([0, []]);
  });

  it('refuses a retry without a URL (400), of a foreign delivery (404), and changes nothing', async () => {
    expect((await outcome(retryDelivery(tenant(), ids[0] as string, deliverer))).code).toBe('INVALID_INPUT');
    const stranger = repositories.forOrganization(randomUUID());
    await setWebhookUrl(stranger, PUBLIC_URL, keys);
    expect((await outcome(retryDelivery(stranger, ids[0] as string, deliverer))).code).toBe('NOT_FOUND');
    const row = await tenant().deliveries.findById(ids[0]).lean();
    expect([row?.status, row?.attempts, row?.cycle]).toEqual(['FAILED', 5, 0]);
  });

  it('starts a new cycle: PENDING, attempts 0, the current URL, and attempt 1 queued', async () => {
    await setWebhookUrl(tenant(), 'https://93.184.215.14/current', keys);
    const view = await retryDelivery(tenant(), ids[0] as string, deliverer);
    expect([view.status, view.attempts, view.url]).toEqual(['PENDING', 0, 'https://93.184.215.14/current']);
    const queue = new Queue('webhook-deliveries', { connection: { url: testRedisUrl() }, prefix });
    try {
      const job = await queue.getJob(`${ids[0]}_1_1`);
      expect(job?.data).toEqual({ deliveryId: ids[0], cycle: 1, attempt: 1 });
    } finally {
      await queue.close();
    }
  });
});

describe('delivery rows', () => {
  /** The stored row of an event the consumer recorded (its first attempt is not made here). */
  async function consumed(event: EventEnvelope) {
    const { deliveries, endpoints } = repositories.acrossOrganizations();
    const consume = createEventConsumer({
      deliveries,
      endpoints: uncachedEndpoints(endpoints),
      deliverer: { first: async () => undefined },
      storedEndpoints: endpointReader(endpoints).readMany,
      releaseWaiting: async () => 0,
    });
    await consume(event);
    return deliveries.collection.findOne({ _id: event.id } as never);
  }

  it("a test event's row has exactly the fields of an event's row, and the test flag", async () => {
    const tenant = repositories.forOrganization(randomUUID());
    await setWebhookUrl(tenant, PUBLIC_URL, keys);
    const real = await consumed(
      createEvent('kyb.verified', tenant.organizationId, {
        organizationId: tenant.organizationId,
        kybStatus: 'VERIFIED',
      }),
    );
    const sent = await sendTestEvent(tenant, 'kyb.verified', { schedule: async () => undefined });
    const test = await repositories
      .acrossOrganizations()
      .deliveries.collection.findOne({ _id: sent.id } as never);
    const { test: flag, ...rest } = (test ?? {}) as Record<string, unknown>;
    expect(flag).toBe(true);
    expect(Object.keys(rest).sort()).toEqual(Object.keys(real ?? {}).sort());
    expect({ ...rest, _id: null, body: null, createdAt: null, updatedAt: null, nextAttemptAt: null }).toEqual(
      {
        ...real,
        _id: null,
        body: null,
        createdAt: null,
        updatedAt: null,
        nextAttemptAt: null,
      },
    );
    expect(Object.keys(JSON.parse(test?.body as string))).toEqual(
      Object.keys(JSON.parse(real?.body as string)),
    );
  });
});

describe('releasing the deliveries that waited for a URL', () => {
  type Job = { deliveryId: string; cycle: number; attempt: number };
  const recordingDeliverer = () => {
    const jobs: Job[] = [];
    return { jobs, schedule: async (job: Job) => void jobs.push(job) };
  };

  /** `count` rows of a new organization waiting for its URL, as the consumer records them. */
  async function waitingRows(count: number) {
    const tenant = repositories.forOrganization(randomUUID());
    const recordedAt = new Date(Date.now() - 60_000);
    const rows = Array.from({ length: count }, () =>
      deliveryRowOf(
        createEvent('kyb.verified', tenant.organizationId, {
          organizationId: tenant.organizationId,
          kybStatus: 'VERIFIED',
        }),
        null,
        recordedAt,
      ),
    );
    await repositories.acrossOrganizations().deliveries.collection.insertMany(rows as never[]);
    return { tenant, ids: rows.map((row) => row._id).sort() };
  }

  it('starts a backlog of more than one page with one update a page, and queues each first attempt once', async () => {
    const count = 2 * RELEASE_PAGE + 34;
    const { tenant, ids } = await waitingRows(count);
    const other = await waitingRows(3);
    // A connection of its own that reports its commands, on the same database.
    const watched = await mongoose
      .createConnection(testMongoUrl(), { dbName: handle.connection.name, monitorCommands: true })
      .asPromise();
    const updates: number[] = [];
    watched.getClient().on('commandStarted', (e) => {
      if (e.commandName === 'update') updates.push((e.command.updates as unknown[]).length);
    });
    try {
      const deliverer = recordingDeliverer();
      const at = new Date();
      const released = await releaseWaiting(
        webhookRepositories(watched).forOrganization(tenant.organizationId),
        deliverer,
        () => at,
      );
      expect(released).toBe(count);
      expect(updates).toEqual([1, 1, 1]);
      expect(deliverer.jobs.map((j) => j.deliveryId).sort()).toEqual(ids);
      expect(deliverer.jobs.every((j) => j.cycle === 0 && j.attempt === 1)).toBe(true);
      const rows = await tenant.deliveries.find({}).lean();
      expect(rows.every((r) => r.nextAttemptAt?.getTime() === at.getTime() && r.lastError === null)).toBe(
        true,
      );
      expect(rows.every((r) => r.url === null && r.status === 'PENDING' && r.attempts === 0)).toBe(true);
      // Another organization's waiting rows are its own URL's to start.
      const others = await other.tenant.deliveries.find({}).lean();
      expect(others.map((r) => r.nextAttemptAt)).toEqual([null, null, null]);
      // Nothing is left to start.
      expect(await releaseWaiting(tenant, deliverer)).toBe(0);
      expect(deliverer.jobs).toHaveLength(count);
    } finally {
      await watched.close();
    }
  });

  it('queues the rows another release took from its page (one job each) and counts only its own', async () => {
    const { tenant, ids } = await waitingRows(10);
    const [taken, attempted] = [ids.slice(0, 4), ids.slice(0, 2)];
    // Between this release's read and its update, another release starts four of the rows and
    // two of those are already attempted.
    let raced = false;
    const racing = {
      ...tenant,
      deliveries: {
        ...tenant.deliveries,
        updateMany: async (...args: Parameters<typeof tenant.deliveries.updateMany>) => {
          if (!raced) {
            raced = true;
            await tenant.deliveries.updateMany(
              { _id: { $in: taken } },
              { $set: { nextAttemptAt: new Date(), lastError: null } },
            );
            await tenant.deliveries.updateMany({ _id: { $in: attempted } }, { $set: { attempts: 1 } });
          }
          return tenant.deliveries.updateMany(...args);
        },
      },
    };
    const deliverer = recordingDeliverer();
    expect(await releaseWaiting(racing, deliverer)).toBe(6);
    expect(deliverer.jobs.map((j) => j.deliveryId).sort()).toEqual(ids.slice(2));
  });

  it('two releases racing over a backlog start each row once between them, and every row is queued', async () => {
    const count = RELEASE_PAGE + 200;
    const { tenant, ids } = await waitingRows(count);
    const [a, b] = [recordingDeliverer(), recordingDeliverer()];
    const counts = await Promise.all([releaseWaiting(tenant, a), releaseWaiting(tenant, b)]);
    expect(counts[0] + counts[1]).toBe(count);
    expect([...new Set([...a.jobs, ...b.jobs].map((j) => j.deliveryId))].sort()).toEqual(ids);
    expect(await tenant.deliveries.countDocuments({ nextAttemptAt: null })).toBe(0);
  });
});

describe("the reconciler's release of forgotten waiting deliveries", () => {
  const GRACE_MS = 60_000;
  let own: MongooseHandle;
  let stores: WebhookRepositories;

  beforeAll(async () => {
    // A database of its own: the pass looks at every organization's rows.
    own = await connectMongoose('webhooks_reconciler');
    stores = webhookRepositories(own.connection);
    await stores.init();
  });
  afterAll(async () => {
    await own.close();
  });

  /** A row as the consumer records it for `organizationId`, `ageMs` ago, with or without a URL. */
  function row(organizationId: string, ageMs: number, url: string | null) {
    const event = createEvent('kyb.verified', organizationId, { organizationId, kybStatus: 'VERIFIED' });
    return deliveryRowOf(event, url, new Date(Date.now() - ageMs));
  }

  it('starts a waiting row whose organization has a URL, reading the waiting rows through their index', async () => {
    const { deliveries } = stores.acrossOrganizations();
    const withUrl = stores.forOrganization(randomUUID());
    await setWebhookUrl(withUrl, PUBLIC_URL, keys);
    const forgotten = row(withUrl.organizationId, 10 * GRACE_MS, null);
    const fresh = row(withUrl.organizationId, 0, null);
    const noUrl = row(randomUUID(), 10 * GRACE_MS, null);
    // The log's bulk: delivered rows, which a pass must not read.
    const delivered = Array.from({ length: 200 }, () => ({
      ...row(randomUUID(), 10 * GRACE_MS, PUBLIC_URL),
      status: 'DELIVERED',
      attempts: 1,
      nextAttemptAt: null,
    }));
    await deliveries.collection.insertMany([forgotten, fresh, noUrl, ...delivered] as never[]);

    const cutoff = new Date(Date.now() - GRACE_MS);
    const plan = await deliveries.collection.find(forgottenFilter(cutoff) as never).explain('executionStats');
    expect(JSON.stringify(plan.queryPlanner.winningPlan)).toContain(
      '"indexName":"status_1_nextAttemptAt_1_createdAt_1"',
    );
    expect(plan.executionStats.totalDocsExamined).toBeLessThanOrEqual(3);

    const started: string[] = [];
    const reconciler = startReconciler({
      deliveries,
      producer,
      logger: createLogger({ name: 'webhooks-reconciler', level: 'silent' }),
      intervalMs: 3_600_000,
      graceMs: GRACE_MS,
      storedEndpoints: endpointReader(stores.acrossOrganizations().endpoints).readMany,
      releaseWaiting: (organizationId) =>
        releaseWaiting(stores.forOrganization(organizationId), {
          schedule: async (job) => void started.push(job.deliveryId),
        }),
    });
    try {
      // The organization's URL releases its fresh row too: the pass starts what waits for it.
      expect(await reconciler.runOnce()).toBe(2);
      expect(started.sort()).toEqual([forgotten._id, fresh._id].sort());
      const stillWaiting = await deliveries.find({ nextAttemptAt: null, status: 'PENDING' }).lean();
      expect(stillWaiting.map((r) => r._id)).toEqual([noUrl._id]);
      expect(await reconciler.runOnce()).toBe(0);
    } finally {
      await reconciler.stop();
    }
  });
});
