import { randomBytes, randomUUID } from 'node:crypto';
import { createEvent, type EventEnvelope } from '@parametric/events';
import { createLogger } from '@parametric/logger';
import { createProducer, type Producer } from '@parametric/queue';
import {
  connectMongoose,
  type MongooseHandle,
  outcome,
  testRedisUrl,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import { Queue } from 'bullmq';
import { listDeliveries, retryDelivery, sendTestEvent } from '../../src/deliveries/domain';
import { createEventConsumer } from '../../src/delivery/consumer';
import { createDeliverer, type Deliverer } from '../../src/delivery/deliverer';
import { endpointReader, uncachedEndpoints } from '../../src/delivery/endpoints';
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
