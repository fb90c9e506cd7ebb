import { randomBytes, randomUUID } from 'node:crypto';
import { connectFailFast } from '@parametric/redis';
import { connectMongoose, eventually, type MongooseHandle, testRedisUrl } from '@parametric/test-harness';
import { createEndpointCache, type EndpointCache } from '../../src/delivery/endpoints';
import { setWebhookUrl } from '../../src/endpoints/domain';
import { type WebhookRepositories, webhookRepositories } from '../../src/repositories';

/** The endpoint cache on the run's MongoDB and Redis: two instances stand for two replicas. */

const keys = { secretKey: randomBytes(32).toString('base64'), allowInsecure: false };
const channel = `webhooks-cache-test-${randomUUID()}`;
const log = { warn: () => undefined };
let handle: MongooseHandle;
let repositories: WebhookRepositories;
const caches: EndpointCache[] = [];

async function replica(maxAgeMs = 600_000) {
  const subscriber = await connectFailFast(testRedisUrl(), log, 'cache-test-sub');
  const cache = createEndpointCache({
    endpoints: repositories.acrossOrganizations().endpoints,
    publisher: await connectFailFast(testRedisUrl(), log, 'cache-test-pub'),
    subscriber,
    channel,
    maxAgeMs,
    logger: log,
  });
  caches.push(cache);
  await eventually(async () => expect(cache.live).toBe(true), { message: 'cache subscribed' });
  return { cache, subscriber };
}

/** An endpoint whose URL is then changed behind the cache's back (as an operator might). */
async function endpointFor(url: string) {
  const organizationId = randomUUID();
  await setWebhookUrl(repositories.forOrganization(organizationId), url, keys);
  const moveTo = (next: string) =>
    repositories
      .acrossOrganizations()
      .endpoints.collection.updateOne({ _id: organizationId } as never, { $set: { url: next } });
  return { organizationId, moveTo };
}

beforeAll(async () => {
  handle = await connectMongoose('webhooks_endpoint_cache');
  repositories = webhookRepositories(handle.connection);
  await repositories.init();
});

afterAll(async () => {
  await Promise.all(caches.map((c) => c.close()));
  await handle.close();
});

describe('endpoint cache', () => {
  it('serves a read endpoint from memory until a change is announced, on this replica and the others', async () => {
    const a = await replica();
    const b = await replica();
    const { organizationId, moveTo } = await endpointFor('https://93.184.215.14/one');
    expect((await a.cache.get(organizationId))?.url).toBe('https://93.184.215.14/one');
    expect((await b.cache.getMany([organizationId])).get(organizationId)?.url).toBe(
      'https://93.184.215.14/one',
    );

    await moveTo('https://93.184.215.14/two');
    // Unannounced, the change is not seen: this is what the announcement is for.
    expect(a.cache.peek(organizationId)?.url).toBe('https://93.184.215.14/one');

    await a.cache.changed(organizationId);
    // Forgotten here at once, before `changed` resolves (the API answers after it).
    expect(a.cache.peek(organizationId)).toBeUndefined();
    expect((await a.cache.get(organizationId))?.url).toBe('https://93.184.215.14/two');
    await eventually(async () => expect(b.cache.peek(organizationId)).toBeUndefined(), {
      message: 'the other replica dropped the entry',
    });
    expect((await b.cache.get(organizationId))?.url).toBe('https://93.184.215.14/two');
  });

  it('uses nothing cached while its subscription is down (announcements would be missed)', async () => {
    const { cache, subscriber } = await replica();
    const { organizationId, moveTo } = await endpointFor('https://93.184.215.14/one');
    await cache.get(organizationId);
    expect(cache.peek(organizationId)).toBeDefined();
    subscriber.disconnect();
    await eventually(async () => expect(cache.live).toBe(false), { message: 'subscription lost' });
    await moveTo('https://93.184.215.14/two');
    expect(cache.peek(organizationId)).toBeUndefined();
    expect((await cache.get(organizationId))?.url).toBe('https://93.184.215.14/two');
    expect(cache.peek(organizationId)).toBeUndefined();
  });

  it('lets an entry expire after maxAgeMs, for changes no one announced', async () => {
    const { cache } = await replica(0);
    const { organizationId, moveTo } = await endpointFor('https://93.184.215.14/one');
    await cache.get(organizationId);
    await moveTo('https://93.184.215.14/two');
    await eventually(
      async () => expect((await cache.get(organizationId))?.url).toBe('https://93.184.215.14/two'),
      {
        message: 'the expired entry read again',
      },
    );
  });

  it('does not cache an organization without an endpoint', async () => {
    const { cache } = await replica();
    const organizationId = randomUUID();
    expect(await cache.get(organizationId)).toBeNull();
    expect(cache.peek(organizationId)).toBeUndefined();
  });
});
