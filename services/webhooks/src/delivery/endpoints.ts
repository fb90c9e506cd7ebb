import type { EndpointModel } from '../endpoints/model';
import { decryptSecret } from '../endpoints/secret-box';

/** What an attempt needs of an organization's endpoint, as stored. */
export interface CurrentEndpoint {
  _id: string;
  url: string;
  secretSealed: string;
}

export interface EndpointReader {
  /** The endpoints of these organizations, read now with one query. */
  readMany(organizationIds: string[]): Promise<Map<string, CurrentEndpoint>>;
  /**
   * One organization's endpoint, read from MongoDB after this call: calls made in the same
   * turn of the event loop share one query. Nothing is kept between reads, so a URL change or
   * a rotation made on any replica is seen by the next attempt.
   */
  read(organizationId: string): Promise<CurrentEndpoint | null>;
}

export function createEndpointReader(endpoints: EndpointModel): EndpointReader {
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
    read(organizationId) {
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
