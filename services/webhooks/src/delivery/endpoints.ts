import type { Redis } from 'ioredis';
import type { EndpointModel } from '../endpoints/model';
import { decryptSecret } from '../endpoints/secret-box';

/** What an attempt needs of an organization's endpoint, as stored. */
export interface CurrentEndpoint {
  _id: string;
  url: string;
  secretSealed: string;
}

/** Where attempts get endpoints from: MongoDB, through a cache or not. */
export interface EndpointSource {
  /** The endpoints of these organizations (one query for those not cached). */
  getMany(organizationIds: string[]): Promise<Map<string, CurrentEndpoint>>;
  /** One organization's endpoint; reads of one event-loop turn share one query. */
  get(organizationId: string): Promise<CurrentEndpoint | null>;
  /** The cached endpoint now, or undefined when it must be read. */
  peek(organizationId: string): CurrentEndpoint | undefined;
}

/** Reads from MongoDB; calls made in the same turn of the event loop share one query. */
export function endpointReader(endpoints: EndpointModel) {
  let queued = new Map<
    string,
    Array<{ resolve(e: CurrentEndpoint | null): void; reject(e: unknown): void }>
  >();
  let armed = false;

  async function readMany(organizationIds: string[]): Promise<Map<string, CurrentEndpoint>> {
    const rows = (await endpoints.collection
      .find({ _id: organizationIds.length === 1 ? organizationIds[0] : { $in: organizationIds } } as never, {
        projection: { url: 1, secretSealed: 1 },
      })
      .toArray()) as unknown as CurrentEndpoint[];
    return new Map(rows.map((row) => [row._id, row]));
  }

  function flush(): void {
    armed = false;
    const batch = queued;
    queued = new Map();
    readMany([...batch.keys()]).then(
      (found) => {
        for (const [id, callers] of batch) for (const c of callers) c.resolve(found.get(id) ?? null);
      },
      (err: unknown) => {
        for (const callers of batch.values()) for (const c of callers) c.reject(err);
      },
    );
  }

  return {
    readMany,
    read(organizationId: string): Promise<CurrentEndpoint | null> {
      return new Promise((resolve, reject) => {
        const callers = queued.get(organizationId);
        if (callers) callers.push({ resolve, reject });
        else queued.set(organizationId, [{ resolve, reject }]);
        if (!armed) {
          armed = true;
          setImmediate(flush);
        }
      });
    },
  };
}

/** No cache: every attempt reads its endpoint when it gets its slot. */
export function uncachedEndpoints(endpoints: EndpointModel): EndpointSource {
  const reader = endpointReader(endpoints);
  return { getMany: reader.readMany, get: reader.read, peek: () => undefined };
}

export interface EndpointCache extends EndpointSource {
  /**
   * The organization's endpoint changed (URL or secret): forgotten here at once and, through
   * Redis pub/sub, on every replica. Call after the write, before answering.
   */
  changed(organizationId: string): Promise<void>;
  /** Whether entries are used (the invalidation channel is subscribed). */
  readonly live: boolean;
  close(): Promise<void>;
}

/**
 * Endpoints cached per process, so an attempt takes no MongoDB round trip while it holds its
 * slot. Every change (`PUT` of the URL, rotation) goes through `changed`, which drops the entry
 * here and publishes the organization id; every replica drops it on receipt. Entries are used
 * only while the subscription stands: on a lost connection the cache is emptied and bypassed
 * (every attempt reads MongoDB) until subscribed again, since messages sent meanwhile are lost.
 * A read that overlaps an invalidation is used once but not kept. Entries also expire after
 * `maxAgeMs`, which bounds what pub/sub cannot see (a change written to MongoDB by hand, a
 * replica that cannot publish while the others still listen).
 */
export function createEndpointCache(options: {
  endpoints: EndpointModel;
  publisher: Redis;
  subscriber: Redis;
  channel: string;
  maxAgeMs: number;
  maxEntries?: number;
  logger: { warn(obj: object, msg: string): void };
  now?: () => number;
}): EndpointCache {
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 10_000;
  const reader = endpointReader(options.endpoints);
  const entries = new Map<string, { endpoint: CurrentEndpoint; at: number }>();
  /** Bumped by every invalidation: a read that began under another epoch is not kept. */
  let epoch = 0;
  let live = false;
  const { subscriber, publisher, channel } = options;

  const forget = (id: string) => {
    epoch++;
    entries.delete(id);
  };
  const clear = () => {
    epoch++;
    entries.clear();
  };
  const keep = (startedAt: number, endpoint: CurrentEndpoint) => {
    if (!live || startedAt !== epoch) return;
    if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
    entries.set(endpoint._id, { endpoint, at: now() });
  };

  const subscribe = () => {
    subscriber
      .subscribe(channel)
      .then(() => {
        clear();
        live = true;
      })
      .catch((err: Error) => options.logger.warn({ err: err.message }, 'endpoint cache: subscribe failed'));
  };
  subscriber.on('message', (ch: string, id: string) => {
    if (ch === channel) forget(id);
  });
  subscriber.on('ready', subscribe);
  for (const event of ['close', 'end', 'reconnecting']) {
    subscriber.on(event, () => {
      live = false;
      clear();
    });
  }
  if (subscriber.status === 'ready') subscribe();

  function peek(id: string): CurrentEndpoint | undefined {
    if (!live) return undefined;
    const entry = entries.get(id);
    if (!entry) return undefined;
    if (now() - entry.at > options.maxAgeMs) {
      entries.delete(id);
      return undefined;
    }
    return entry.endpoint;
  }

  return {
    get live() {
      return live;
    },
    peek,
    async get(id) {
      const hit = peek(id);
      if (hit) return hit;
      const startedAt = epoch;
      const endpoint = await reader.read(id);
      if (endpoint) keep(startedAt, endpoint);
      return endpoint;
    },
    async getMany(ids) {
      const found = new Map<string, CurrentEndpoint>();
      const missing: string[] = [];
      for (const id of ids) {
        const hit = peek(id);
        if (hit) found.set(id, hit);
        else missing.push(id);
      }
      if (missing.length === 0) return found;
      const startedAt = epoch;
      for (const [id, endpoint] of await reader.readMany(missing)) {
        found.set(id, endpoint);
        keep(startedAt, endpoint);
      }
      return found;
    },
    async changed(id) {
      forget(id);
      try {
        await publisher.publish(channel, id);
      } catch (err) {
        // The change is in MongoDB; replicas that still listen drop the entry within maxAgeMs.
        options.logger.warn(
          { err: (err as Error).message, organizationId: id },
          'endpoint cache: publish failed',
        );
      }
    },
    async close() {
      live = false;
      clear();
      for (const client of [subscriber, publisher]) {
        try {
          if (client.status !== 'end') await client.quit();
        } catch {
          client.disconnect();
        }
      }
    },
  };
}

/**
 * Decrypted signing secrets, keyed by their sealed (encrypted) form. A rotation stores a new
 * sealed value, so it can never hit an old entry: no invalidation is needed, on any replica.
 * Bounded; the oldest entry goes first.
 */
export function createSecretCache(secretKey: string, maxEntries = 10_000) {
  const plain = new Map<string, string>();
  return (sealed: string): string => {
    const hit = plain.get(sealed);
    if (hit !== undefined) return hit;
    const secret = decryptSecret(sealed, secretKey);
    if (plain.size >= maxEntries) plain.delete(plain.keys().next().value as string);
    plain.set(sealed, secret);
    return secret;
  };
}
