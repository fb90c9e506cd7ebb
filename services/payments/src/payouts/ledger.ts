import { createHash, randomUUID } from 'node:crypto';
import type { PAYOUT_ATTEMPT_KINDS } from '@parametric/contracts';
import type { Logger } from '@parametric/logger';
import type { PartDoc, PayoutAttemptDoc, PayoutDoc } from './model';
import type { PayoutLedger } from './store';

type Kind = (typeof PAYOUT_ATTEMPT_KINDS)[number];

/** The order of an attempt's life; the ledger's order among rows written in the same millisecond. */
const RANK: Record<Kind, number> = {
  B2C_REQUEST: 1,
  B2C_RESPONSE: 2,
  B2C_RESULT: 3,
  B2C_QUEUE_TIMEOUT: 3,
  STATUS_QUERY: 4,
  STATUS_RESULT: 5,
  STATUS_TIMEOUT: 5,
};

/** The ledger's order: by time, then within a millisecond by part, attempt and step. */
export const LEDGER_ORDER = { at: 1, part: 1, attempt: 1, rank: 1, _id: 1 } as const;

export interface LedgerFacts {
  amountMinor?: string | null;
  conversationId?: string | null;
  resultCode?: string | null;
  resultDesc?: string | null;
  receipt?: string | null;
}

/** The attempt of a part an OriginatorConversationID belongs to (1 when the part never used it). */
export const attemptOf = (part: PartDoc, ocid: string) =>
  Math.max(1, part.originatorConversationIds.indexOf(ocid) + 1);

/**
 * A ledger row. Our own requests get a fresh id each (sending twice is two rows); what Daraja
 * tells us is keyed on its content, so a callback delivered twice is one row.
 */
export function ledgerRow(
  p: Pick<PayoutDoc, '_id' | 'organizationId'>,
  part: PartDoc,
  kind: Kind,
  ocid: string,
  at: Date,
  facts: LedgerFacts = {},
): PayoutAttemptDoc {
  const fromDaraja = kind !== 'B2C_REQUEST' && kind !== 'B2C_RESPONSE' && kind !== 'STATUS_QUERY';
  const id = fromDaraja
    ? createHash('sha256')
        .update(
          JSON.stringify([
            p._id,
            kind,
            ocid,
            facts.conversationId ?? null,
            facts.resultCode ?? null,
            facts.receipt ?? null,
          ]),
        )
        .digest('hex')
    : randomUUID();
  return {
    _id: id,
    payoutId: p._id,
    organizationId: p.organizationId,
    part: part.index,
    attempt: attemptOf(part, ocid),
    kind,
    rank: RANK[kind],
    originatorConversationId: ocid,
    amountMinor: facts.amountMinor ?? null,
    at,
    conversationId: facts.conversationId ?? null,
    resultCode: facts.resultCode ?? null,
    resultDesc: facts.resultDesc ?? null,
    receipt: facts.receipt ?? null,
  };
}

/**
 * Records what already happened (an answer, a callback). The payout's state is written first and
 * is what pays; a row that cannot be stored is logged, not retried: the callback itself is kept
 * in `provider_callbacks` whatever becomes of it.
 */
export async function recordAfter(
  ledger: PayoutLedger,
  row: PayoutAttemptDoc,
  logger: Logger,
): Promise<void> {
  try {
    await ledger.append(row);
  } catch (err) {
    logger.error(
      {
        payoutId: row.payoutId,
        kind: row.kind,
        ocid: row.originatorConversationId,
        err: (err as Error).message,
      },
      'payout ledger row not stored',
    );
  }
}
