import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { runPayoutAttempt } from '../../src/payouts/attempt';
import { onB2cQueueTimeout, onB2cResult, onStatusResult } from '../../src/payouts/callbacks';
import type { PayoutDoc } from '../../src/payouts/model';
import { originatePayout } from '../../src/payouts/originate';
import { type Accepted, type B2cInput, DarajaError, type TransactionStatusInput } from '../../src/provider';
import { PayoutWorld, SETTINGS } from './payout-harness';

// Invariants of the payout state machine under everything an unreliable provider and an
// at-least-once queue can do, in any order (docs/payments.md, "Payouts"):
// - no part of a payout is ever paid twice, and no payout is paid more than its amount;
// - a COMPLETED payout had every part paid exactly once, its receipts named in part order;
// - a FAILED payout's failed part was never paid;
// - `payout.completed` / `payout.failed` are sent when, and only when, the status becomes so.

/** What really happened to a payment request M-Pesa accepted, decided when it accepts it. */
type Fate = 'PAID' | 'RETRIABLE' | 'PERMANENT' | 'TIMEOUT_PAID' | 'TIMEOUT_UNPAID';

interface Pending {
  deliver(): Promise<unknown>;
}

/**
 * M-Pesa as the payments service meets it: each accepted request has a fate; its callback (a
 * Result, or a QueueTimeOut that hides whether it paid) is queued for delivery, which the
 * scheduler may delay, repeat or lose; Transaction Status tells the truth, by a callback that may
 * be lost too. `paid` is what actually left the account, per OriginatorConversationID.
 */
class UnreliableDaraja {
  readonly paid = new Map<string, string>();
  readonly pending: Pending[] = [];
  private readonly fates = new Map<string, Fate>();
  private readonly taken = new Set<string>();
  constructor(
    private readonly w: PayoutWorld,
    private readonly choose: () => number,
  ) {}

  private pick<T>(values: readonly T[]): T {
    return values[this.choose() % values.length] as T;
  }

  async b2c(input: B2cInput): Promise<Accepted> {
    const ocid = input.originatorConversationId;
    if (this.taken.has(ocid)) {
      throw new DarajaError('DUPLICATE', 'Duplicate OriginatorConversationID.', {
        errorCode: '500.002.1001',
      });
    }
    if (this.pick([false, false, false, true])) {
      // Lost on the way there or back: half the time it arrived.
      if (this.pick([false, true])) this.accept(ocid, input.amount);
      throw new DarajaError('UNAVAILABLE', 'Daraja did not answer');
    }
    this.accept(ocid, input.amount);
    return { conversationId: `AG_${ocid}`, originatorConversationId: ocid };
  }

  private accept(ocid: string, amount: number) {
    this.taken.add(ocid);
    const fate = this.pick<Fate>([
      'PAID',
      'PAID',
      'RETRIABLE',
      'PERMANENT',
      'TIMEOUT_PAID',
      'TIMEOUT_UNPAID',
    ]);
    this.fates.set(ocid, fate);
    if (fate === 'PAID' || fate === 'TIMEOUT_PAID')
      this.paid.set(ocid, `R${this.paid.size + 1}-${ocid.slice(-6)}`);
    const deps = () => this.w.callbackDeps();
    const receipt = this.paid.get(ocid);
    const callback: Pending =
      fate === 'TIMEOUT_PAID' || fate === 'TIMEOUT_UNPAID'
        ? { deliver: () => onB2cQueueTimeout({ originatorConversationId: ocid }, deps()) }
        : {
            deliver: () =>
              onB2cResult(
                {
                  originatorConversationId: ocid,
                  conversationId: `AG_${ocid}`,
                  resultCode: 0,
                  rawResultCode: fate === 'PAID' ? '0' : fate === 'RETRIABLE' ? '1' : '2040',
                  resultDesc: fate,
                  transactionId: receipt ?? '',
                  ...(receipt ? { receipt, amount } : {}),
                },
                deps(),
              ),
          };
    this.pending.push(callback);
  }

  async transactionStatus(input: TransactionStatusInput): Promise<Accepted> {
    const queryOcid = `status-${randomUUID()}`;
    const asked = input.originatorConversationId;
    const receipt = this.paid.get(asked);
    this.pending.push({
      deliver: () =>
        onStatusResult(
          {
            originatorConversationId: queryOcid,
            conversationId: `AG_${queryOcid}`,
            resultCode: 0,
            rawResultCode: '0',
            resultDesc: 'ok',
            transactionId: receipt ?? '',
            transaction: {
              originatorConversationId: asked,
              // Daraja knows a request it never received as nothing: not completed.
              status: receipt ? 'Completed' : 'Failed',
              ...(receipt ? { receipt } : {}),
            },
          },
          this.w.callbackDeps(),
        ),
    });
    return { conversationId: `AG_${queryOcid}`, originatorConversationId: queryOcid };
  }
}

interface Job {
  part: number;
  until: number;
}

async function scenario(owedMinor: string, choices: number[]) {
  let i = 0;
  const choose = () => choices[i++ % choices.length] as number;
  const w = new PayoutWorld();
  const daraja = new UnreliableDaraja(w, choose);
  const deps = { ...w.attemptDeps(), provider: daraja };
  const { payout } = await originatePayout(
    w.determination({ owedMinor }),
    w.originateDeps({ minAmount: 10, maxAmount: 1_000 }),
  );
  // BullMQ's de-duplication by job id: a job id is queued once.
  const seen = new Set<string>();
  const jobs: Job[] = [];
  const collectJobs = () => {
    for (const job of w.store.jobsOf('payout-attempts')) {
      if (seen.has(job.id)) continue;
      seen.add(job.id);
      jobs.push({ part: (job.payload as { part: number }).part, until: 0 });
    }
  };
  collectJobs();
  for (let step = 0; step < 400 && (jobs.length > 0 || daraja.pending.length > 0); step++) {
    const action = choose() % 10;
    if (action < 5 && jobs.length > 0) {
      const due = jobs.filter((j) => j.until <= w.nowMs);
      if (due.length === 0) {
        w.nowMs = Math.min(...jobs.map((j) => j.until));
        continue;
      }
      const job = due[choose() % due.length] as Job;
      const result = await runPayoutAttempt(payout._id, job.part, deps);
      if (result.kind === 'done') jobs.splice(jobs.indexOf(job), 1);
      else job.until = result.until;
    } else if (daraja.pending.length > 0) {
      const at = choose() % daraja.pending.length;
      const [callback] = daraja.pending.splice(at, 1) as [Pending];
      const fate = choose() % 8;
      if (fate === 0) continue; // lost
      await callback.deliver();
      if (fate === 1) await callback.deliver(); // delivered twice
    } else {
      w.advance(SETTINGS.retryBaseMs);
    }
    collectJobs();
  }
  return { w, daraja, payoutId: payout._id };
}

describe('payout invariants under an unreliable provider and queue', () => {
  it('never pays a part twice, nor more than the payout; its status and events tell the truth', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('50000', '150000', '250100', '299999'), // KES 500 (1 part) … 2,999.99 (3 parts of ≤ 1,000)
        fc.array(fc.nat({ max: 1_000 }), { minLength: 50, maxLength: 300 }),
        async (owedMinor, choices) => {
          const { w, daraja, payoutId } = await scenario(owedMinor, choices);
          const p = (await w.store.get(payoutId)) as PayoutDoc;
          const paidBy = (ocids: readonly string[]) => ocids.filter((o) => daraja.paid.has(o));
          let paidTotal = 0n;
          for (const part of p.parts) {
            const paid = paidBy(part.originatorConversationIds);
            expect(paid.length).toBeLessThanOrEqual(1);
            if (paid.length === 1) paidTotal += BigInt(part.amountMinor);
            if (part.status === 'COMPLETED') {
              expect(paid).toHaveLength(1);
              expect(part.receipt).toBe(daraja.paid.get(paid[0] as string));
            }
            if (part.status === 'FAILED') expect(paid).toHaveLength(0);
          }
          expect(paidTotal <= BigInt(p.amountMinor)).toBe(true);
          if (p.status === 'COMPLETED') {
            expect(paidTotal).toBe(BigInt(p.amountMinor));
            expect(p.mobileMoneyRef).toBe(p.parts.map((part) => part.receipt).join(','));
          }
          // Each terminal event marks a change into that status; the last one is where it stands.
          const terminal = w.store.eventsOf(payoutId).map((e) => e.event);
          for (let k = 1; k < terminal.length; k++) expect(terminal[k]).not.toBe(terminal[k - 1]);
          if (p.status === 'COMPLETED') expect(terminal.at(-1)).toBe('payout.completed');
          if (p.status === 'FAILED') expect(terminal.at(-1)).toBe('payout.failed');
          if (p.status === 'PENDING' || p.status === 'PROCESSING') {
            expect(terminal.filter((e) => e === 'payout.completed')).toHaveLength(0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
