import type { PayableCursor, PayableDeterminations } from '@parametric/determinations-client';
import { AppError } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import type { SweepStateModel } from './model';
import { type OriginateDeps, originatePayout } from './originate';

const STATE_ID = 'payout-originations';

/** Where the sweep has got to: every payable determination up to `cursor` has its payout. */
export interface SweepState {
  get(): Promise<PayableCursor | null>;
  set(cursor: PayableCursor): Promise<void>;
}

export function sweepStateOf(model: SweepStateModel): SweepState {
  return {
    async get() {
      const doc = await model.findById(STATE_ID).lean();
      return doc?.checkedIssuedAt && doc.checkedId
        ? { issuedAt: doc.checkedIssuedAt.toISOString(), id: doc.checkedId }
        : null;
    },
    async set(cursor) {
      await model.updateOne(
        { _id: STATE_ID },
        { $set: { checkedIssuedAt: new Date(cursor.issuedAt), checkedId: cursor.id } },
        { upsert: true },
      );
    },
  };
}

export interface OriginationSweepDeps {
  originate: OriginateDeps;
  payable: PayableDeterminations;
  state: SweepState;
  /**
   * Determinations issued this recently are left to their `payout-originations` job: one issued
   * just before the sweep looked may still be being written (an ingestion stamps `issuedAt` as it
   * starts). The sweep reads each determination once it is older than this.
   */
  settleMs: number;
  pageSize: number;
  logger: Logger;
}

export interface SweepOutcome {
  checked: number;
  originated: number;
  /** Still owed a payout: one could not be originated now (the sweep resumes from it). */
  blocked: boolean;
}

/**
 * Originates the payout of every triggered Tier 2 determination with a non-zero amount owed that
 * has none: what a payout-originations job lost (Redis lost its data), gave up on (its retry
 * budget ran out) or never had. Pages through the determinations service's payable list oldest
 * first, from where it got to, and moves that mark on only past determinations whose payout now
 * exists, so a determination it cannot pay now (the rate source down) is looked at again on every
 * pass until it is paid. Idempotent with the jobs: one payout per determination, whoever is first.
 */
export async function sweepOriginations(deps: OriginationSweepDeps, now: Date): Promise<SweepOutcome> {
  const issuedBefore = new Date(now.getTime() - deps.settleMs);
  let cursor = await deps.state.get();
  let checked = 0;
  let originated = 0;
  for (;;) {
    const page = await deps.payable({ after: cursor, issuedBefore, limit: deps.pageSize });
    for (const d of page) {
      checked++;
      try {
        const { created } = await originatePayout(d.determinationId, deps.originate);
        if (created) originated++;
      } catch (err) {
        if (err instanceof AppError && err.status < 500) {
          // Listed as payable, refused as such (e.g. owed in a currency M-Pesa does not pay): it
          // never will be; ops are told once, as the sweep passes it.
          deps.logger.error(
            { determinationId: d.determinationId, code: err.code, err: err.message },
            'payable determination refused by payout origination: nothing will be paid, needs ops',
          );
        } else {
          deps.logger.warn(
            { determinationId: d.determinationId, err: (err as Error).message },
            'payout origination sweep stopped: resumes from this determination next time',
          );
          if (cursor) await deps.state.set(cursor);
          if (originated > 0) deps.logger.info({ originated }, 'payouts originated by the sweep');
          return { checked, originated, blocked: true };
        }
      }
      cursor = { issuedAt: d.issuedAt as string, id: d.determinationId };
    }
    // Once a page: a crash re-checks at most one page, which finds its payouts already there.
    if (cursor && page.length > 0) await deps.state.set(cursor);
    if (page.length < deps.pageSize) break;
  }
  if (originated > 0)
    deps.logger.warn({ originated }, 'payouts originated by the sweep (their jobs were lost or gave up)');
  return { checked, originated, blocked: false };
}
