import type { EventEnvelope } from '@parametric/events';
import type { JobOutboxEntry } from '@parametric/queue';
import type { PayoutAttemptDoc, PayoutDoc } from '../../src/payouts/model';
import type { NewPayout, Outbox, PayoutLedger, PayoutStore } from '../../src/payouts/store';

const clone = <T>(value: T): T => structuredClone(value);

/**
 * The payout store and ledger in memory, behind the interfaces the domain uses in production
 * (`PayoutStore`, `PayoutLedger`): the same compare-and-set on `seq`, the same one-payout-per-
 * determination rule, and every event and job a write recorded, in write order, for the tests to
 * read as the outbox relays would send them.
 */
export class MemoryPayoutStore implements PayoutStore, PayoutLedger {
  readonly payouts = new Map<string, PayoutDoc>();
  readonly rows: PayoutAttemptDoc[] = [];
  readonly events: EventEnvelope[] = [];
  readonly jobs: JobOutboxEntry[] = [];
  /** Set to make the next `update` miss once, as a concurrent writer would make it. */
  interfere?: (p: PayoutDoc) => void;

  constructor(private readonly now: () => Date) {}

  async get(id: string) {
    const p = this.payouts.get(id);
    return p ? clone(p) : null;
  }

  async byDetermination(determinationId: string) {
    return this.find((p) => p.determinationId === determinationId);
  }

  async byOriginatorConversationId(ocid: string) {
    return this.find((p) => p.parts.some((part) => part.originatorConversationIds.includes(ocid)));
  }

  async byStatusQuery(queryOcid: string) {
    return this.find((p) => p.parts.some((part) => part.statusQuery?.queryOcid === queryOcid));
  }

  async insert(payout: NewPayout, outbox: Outbox) {
    if ([...this.payouts.values()].some((p) => p.determinationId === payout.determinationId)) return null;
    const now = this.now();
    const stored = { ...clone(payout), createdAt: now, updatedAt: now } as PayoutDoc;
    this.payouts.set(payout._id, stored);
    this.record(outbox);
    return clone(stored);
  }

  async update(id: string, seq: number, set: Partial<PayoutDoc>, outbox: Outbox) {
    const stored = this.payouts.get(id);
    if (stored && this.interfere) {
      const interfere = this.interfere;
      this.interfere = undefined;
      interfere(stored);
      stored.seq = (stored.seq ?? 0) + 1;
    }
    if (!stored || (stored.seq ?? 0) !== seq) return null;
    const next = { ...stored, ...clone(set), seq: seq + 1, updatedAt: this.now() } as PayoutDoc;
    this.payouts.set(id, next);
    this.record(outbox);
    return clone(next);
  }

  async append(row: PayoutAttemptDoc) {
    if (this.rows.some((r) => r._id === row._id)) return;
    this.rows.push(clone(row));
  }

  async history(payoutId: string) {
    const key = (r: PayoutAttemptDoc) => [r.at.getTime(), r.part, r.attempt, r.rank] as const;
    return this.rows
      .filter((r) => r.payoutId === payoutId)
      .sort((a, b) => {
        const [x, y] = [key(a), key(b)];
        for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
        return a._id < b._id ? -1 : 1;
      })
      .map(clone);
  }

  /** The events of one kind about one payout, in the order they were written. */
  eventsOf(payoutId: string, name?: string) {
    return this.events.filter(
      (e) =>
        (e.data as { payoutId?: string }).payoutId === payoutId && (name === undefined || e.event === name),
    );
  }

  jobsOf(queue: string) {
    return this.jobs.filter((j) => j.queue === queue);
  }

  private find(match: (p: PayoutDoc) => boolean) {
    const p = [...this.payouts.values()].find(match);
    return p ? clone(p) : null;
  }

  private record(outbox: Outbox) {
    this.events.push(...clone(outbox.events));
    this.jobs.push(...clone(outbox.jobs));
  }
}
