/**
 * What a gateway replica remembers between requests, each entry with the organization's
 * version stamp (versions.ts) it was read under: a use is good only while Redis still holds
 * that stamp. Bounded in count (the oldest entry goes first) and in age; an entry's age is
 * time elapsed in this process, as a timer measures it (`Date.now()`), not the service's clock.
 */
export class StampedCache<V> {
  private readonly entries = new Map<
    string,
    { value: V; organizationId: string; version: string; storedAt: number }
  >();

  constructor(
    private readonly maxEntries: number,
    private readonly maxAgeMs: number,
  ) {}

  /** The entry, unless it is older than the age limit. Its stamp is the caller's to check. */
  get(key: string): { value: V; organizationId: string; version: string } | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (Date.now() - entry.storedAt > this.maxAgeMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /**
   * Stores what was read from MongoDB after `version` was read from Redis (never before: a
   * change between the two reads would then be cached under the stamp that replaced it).
   */
  set(key: string, organizationId: string, version: string, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, organizationId, version, storedAt: Date.now() });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Forgets everything: after Redis failed, no stamp cached before can be trusted. */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
