import { type EventEnvelope, outboxInsert, withOutboxEvents } from '@parametric/events';
import { isDuplicateKey, type TenantScope } from '@parametric/mongo';
import { type JobOutboxEntry, jobOutboxInsert, withOutboxJobs } from '@parametric/queue';
import type { QueryFilter, UpdateQuery } from 'mongoose';
import { LEDGER_ORDER } from './ledger';
import type { PayoutAttemptDoc, PayoutAttemptModel, PayoutDoc, PayoutModel } from './model';

/** A payout as origination makes it, before the store adds its timestamps. */
export type NewPayout = Omit<
  PayoutDoc,
  'createdAt' | 'updatedAt' | 'outbox' | 'outboxPending' | 'jobOutbox' | 'jobOutboxPending'
>;

/** The events and jobs a write records with its change, in the same single-document write. */
export interface Outbox {
  events: EventEnvelope[];
  jobs: JobOutboxEntry[];
}

/**
 * What the payout state machine needs of storage, and nothing more: the domain never sees a
 * MongoDB filter. The MongoDB implementations are below; the domain tests run the same domain
 * code on an in-memory one (services/payments/test/domain/payout-store.ts).
 */
export interface PayoutStore {
  get(id: string): Promise<PayoutDoc | null>;
  byDetermination(determinationId: string): Promise<PayoutDoc | null>;
  /** The payout one of whose parts used this OriginatorConversationID. */
  byOriginatorConversationId(ocid: string): Promise<PayoutDoc | null>;
  /** The payout one of whose parts has a Transaction Status query with this id. */
  byStatusQuery(queryOcid: string): Promise<PayoutDoc | null>;
  /** Stores a new payout with its events and jobs; null when its determination already has one. */
  insert(payout: NewPayout, outbox: Outbox): Promise<PayoutDoc | null>;
  /**
   * Compare-and-set: writes `set` with the events and jobs only if the payout's `seq` is still
   * `seq` (and bumps it); the payout after the write, or null when it moved meanwhile.
   */
  update(id: string, seq: number, set: Partial<PayoutDoc>, outbox: Outbox): Promise<PayoutDoc | null>;
  /** Called once per committed change (`payouts_total`): the payout before and after it. */
  changed?(before: PayoutDoc, after: PayoutDoc): void;
}

/** The payout ledger (`payout_attempts`): appended to, never rewritten. */
export interface PayoutLedger {
  /** Stores the row; a row with the same id already stored (a repeated callback) is not stored again. */
  append(row: PayoutAttemptDoc): Promise<void>;
  /** One payout's rows, oldest first. */
  history(payoutId: string): Promise<PayoutAttemptDoc[]>;
}

function updateOf(seq: number, set: Partial<PayoutDoc>, outbox: Outbox): UpdateQuery<PayoutDoc> {
  let update: UpdateQuery<PayoutDoc> = { $set: { ...set, seq: seq + 1 } };
  if (outbox.events.length > 0) {
    update = withOutboxEvents<PayoutDoc>(update, ...(outbox.events as [EventEnvelope, ...EventEnvelope[]]));
  }
  return withOutboxJobs(update as Record<string, unknown>, ...outbox.jobs) as UpdateQuery<PayoutDoc>;
}

/** Payouts of every organization: the workers, callbacks, sweep and ops door. */
export function payoutStoreOf(model: PayoutModel, changed?: PayoutStore['changed']): PayoutStore {
  const one = (filter: QueryFilter<PayoutDoc>) => model.findOne(filter).lean<PayoutDoc>().exec();
  return {
    ...(changed ? { changed } : {}),
    get: (id) => one({ _id: id }),
    byDetermination: (determinationId) => one({ determinationId }),
    byOriginatorConversationId: (ocid) => one({ 'parts.originatorConversationIds': ocid }),
    byStatusQuery: (queryOcid) => one({ 'parts.statusQuery.queryOcid': queryOcid }),
    async insert(payout, outbox) {
      try {
        const created = await model.create({
          ...payout,
          ...(outbox.events.length > 0 ? outboxInsert(...(outbox.events as [EventEnvelope])) : {}),
          ...jobOutboxInsert(...outbox.jobs),
        });
        return created.toObject() as PayoutDoc;
      } catch (err) {
        if (isDuplicateKey(err)) return null;
        throw err;
      }
    },
    update: (id, seq, set, outbox) =>
      model
        .findOneAndUpdate({ _id: id, seq } as QueryFilter<PayoutDoc>, updateOf(seq, set, outbox), {
          returnDocument: 'after',
        })
        .lean<PayoutDoc>()
        .exec(),
  };
}

/** One organization's payouts (a partner's reads and retry): every query carries the tenant. */
export function tenantPayoutStoreOf(scope: TenantScope<PayoutDoc>): PayoutStore {
  const one = (filter: QueryFilter<PayoutDoc>) => scope.findOne(filter).lean<PayoutDoc>().exec();
  return {
    get: (id) => one({ _id: id }),
    byDetermination: (determinationId) => one({ determinationId }),
    byOriginatorConversationId: (ocid) => one({ 'parts.originatorConversationIds': ocid }),
    byStatusQuery: (queryOcid) => one({ 'parts.statusQuery.queryOcid': queryOcid }),
    insert: () =>
      Promise.reject(new Error('payouts are originated across organizations, never by a partner')),
    update: async (id, seq, set, outbox) =>
      (await scope.findOneAndUpdate(
        { _id: id, seq } as QueryFilter<PayoutDoc>,
        updateOf(seq, set, outbox),
      )) as PayoutDoc | null,
  };
}

export function payoutLedgerOf(model: PayoutAttemptModel): PayoutLedger {
  return {
    async append(row) {
      try {
        await model.create(row);
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    },
    history: (payoutId) => model.find({ payoutId }).sort(LEDGER_ORDER).lean<PayoutAttemptDoc[]>().exec(),
  };
}

/** One organization's ledger rows (the partner's read). */
export function tenantLedgerOf(scope: TenantScope<PayoutAttemptDoc>): Pick<PayoutLedger, 'history'> {
  return {
    history: (payoutId) => scope.find({ payoutId }).sort(LEDGER_ORDER).lean<PayoutAttemptDoc[]>().exec(),
  };
}
