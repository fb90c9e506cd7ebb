import { AppError } from '@parametric/http';
import { type AttemptStep, runPayoutAttempt } from '../../src/payouts/attempt';
import { onB2cQueueTimeout, onB2cResult, onStatusResult, onStatusTimeout } from '../../src/payouts/callbacks';
import type { PayoutDoc } from '../../src/payouts/model';
import { originatePayout } from '../../src/payouts/originate';
import { readPayout, retryPayout } from '../../src/payouts/reads';
import type { B2cResult, TransactionStatusResult } from '../../src/provider';
import { PayoutWorld, SETTINGS } from './payout-harness';

// The payout state machine on its own (docs/payments.md, "Payouts"): origination from a
// determination, parts, rounding, the provider's limits, every attempt transition, callbacks,
// the partner's retry and the ledger, on the in-memory store behind the production interfaces.

let w: PayoutWorld;
beforeEach(() => {
  w = new PayoutWorld();
});

let receipts = 0;
const receipt = () => `SGR${String(++receipts).padStart(7, '0')}`;

function b2cResult(ocid: string, code: string, extra: Partial<B2cResult> = {}): B2cResult {
  const paid = code === '0';
  const r = paid ? (extra.receipt ?? receipt()) : undefined;
  return {
    originatorConversationId: ocid,
    conversationId: `AG_${ocid}`,
    resultCode: Number.isNaN(Number(code)) ? -1 : Number(code),
    rawResultCode: code,
    resultDesc: paid ? 'The service request is processed successfully.' : `ResultCode ${code}`,
    transactionId: r ?? '',
    ...(r ? { receipt: r } : {}),
    ...extra,
  };
}

function statusResult(
  queryOcid: string,
  askedAbout: string,
  status: 'Completed' | 'Failed',
  r?: string,
): TransactionStatusResult {
  return {
    originatorConversationId: queryOcid,
    conversationId: `AG_${queryOcid}`,
    resultCode: 0,
    rawResultCode: '0',
    resultDesc: 'The service request is processed successfully.',
    transactionId: r ?? '',
    transaction: { originatorConversationId: askedAbout, status, ...(r ? { receipt: r } : {}) },
  };
}

const originate = (determinationId: string, limits?: { minAmount: number; maxAmount: number }) =>
  originatePayout(determinationId, w.originateDeps(limits));
const attempt = (payoutId: string, part = 1): Promise<AttemptStep> =>
  runPayoutAttempt(payoutId, part, w.attemptDeps());
const stored = async (id: string) => (await w.store.get(id)) as PayoutDoc;
const ocidOf = async (id: string, part = 1) =>
  (await stored(id)).parts.find((p) => p.index === part)?.originatorConversationId as string;

async function expectRefusal(promise: Promise<unknown>, code: string, status: number) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe(code);
  expect((err as AppError).status).toBe(status);
}

/** Sends the current attempt of a part and calls its Result back with `code`. */
async function sendAndAnswer(payoutId: string, part: number, code: string) {
  await attempt(payoutId, part);
  const ocid = await ocidOf(payoutId, part);
  return onB2cResult(b2cResult(ocid, code), w.callbackDeps());
}

describe('origination takes everything from the determination', () => {
  it('pays the amount owed rounded up to whole shillings, never less', async () => {
    const id = w.determination({ owedMinor: '411481' }); // KES 4,114.81 owed
    const { created, payout } = await originate(id);
    expect(created).toBe(true);
    expect(payout).toMatchObject({
      determinationId: id,
      organizationId: w.organizationId,
      owedMinor: '411481',
      amountMinor: '411500',
      status: 'PENDING',
      phone: '+254711000001',
    });
    expect(payout.parts).toHaveLength(1);
    expect(w.store.jobsOf('payout-attempts').map((j) => j.payload)).toEqual([
      { payoutId: payout._id, part: 1 },
    ]);
    await attempt(payout._id);
    expect(w.daraja.b2cOf(payout._id).map((r) => r.amount)).toEqual([4115]);
  });

  it('is one payout per determination, however often and however concurrently asked', async () => {
    const id = w.determination();
    const results = await Promise.all(Array.from({ length: 8 }, () => originate(id)));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.payout._id)).size).toBe(1);
    expect(w.store.payouts.size).toBe(1);
    expect(w.store.jobsOf('payout-attempts')).toHaveLength(1);
  });

  it('refuses what is not owed a payout, writing nothing', async () => {
    await expectRefusal(originate('5b2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b'), 'NOT_FOUND', 404);
    await expectRefusal(originate(w.determination({ status: 'UNATTRIBUTED' })), 'INVALID_INPUT', 400);
    await expectRefusal(
      originate(w.determination({ triggered: false, owedMinor: '0' })),
      'INVALID_INPUT',
      400,
    );
    await expectRefusal(originate(w.determination({ owedMinor: '0' })), 'INVALID_INPUT', 400);
    await expectRefusal(originate(w.determination({ currency: 'GHS' })), 'INVALID_INPUT', 400);
    await expectRefusal(
      originate(w.determination({ settlementMode: 'DETERMINATION' })),
      'TIER_NOT_ENTITLED',
      403,
    );
    expect(w.store.payouts.size).toBe(0);
    expect(w.store.events).toHaveLength(0);
    expect(w.quotes).toBe(0);
  });

  it('writes nothing when no exchange rate can be had (the caller retries)', async () => {
    const id = w.determination();
    w.rateDown = true;
    await expectRefusal(originate(id), 'PAYMENT_ERROR', 502);
    expect(w.store.payouts.size).toBe(0);
    w.rateDown = false;
    expect((await originate(id)).created).toBe(true);
  });

  it('fails a payout below M-Pesa’s minimum at once: payout.failed, nothing sent, no retry', async () => {
    const id = w.determination({ owedMinor: '50' }); // KES 0.50 owed: KES 1 to pay, minimum 10
    const { payout } = await originate(id);
    expect(payout).toMatchObject({
      status: 'FAILED',
      reason: 'BELOW_PROVIDER_MINIMUM',
      amountMinor: '100',
      parts: [],
    });
    expect(
      w.store.eventsOf(payout._id).map((e) => [e.event, (e.data as { reason?: string }).reason]),
    ).toEqual([['payout.failed', 'BELOW_PROVIDER_MINIMUM']]);
    expect(w.store.jobsOf('payout-attempts')).toHaveLength(0);
    await expectRefusal(
      retryPayout({ payoutStore: w.store }, payout._id, {
        findPolicy: w.originateDeps().findPolicy,
        maxAttempts: 3,
        now: w.now(),
      }),
      'CONFLICT',
      409,
    );
  });

  it('pays exactly the minimum', async () => {
    const { payout } = await originate(w.determination({ owedMinor: '901' })); // 9.01 → 10
    expect(payout).toMatchObject({ status: 'PENDING', amountMinor: '1000' });
  });

  it('splits an amount above M-Pesa’s maximum into as few, as equal parts, paid one after another', async () => {
    const { payout } = await originate(w.determination({ owedMinor: '60000000' })); // KES 600,000
    expect(payout.parts.map((p) => [p.index, p.amountMinor, p.phase])).toEqual([
      [1, '20000000', 'SENDING'],
      [2, '20000000', 'WAITING'],
      [3, '20000000', 'WAITING'],
    ]);
    // A later part does nothing before its turn, even if asked.
    expect(await attempt(payout._id, 2)).toEqual({ kind: 'done' });
    expect(w.daraja.b2cRequests).toHaveLength(0);
  });
});

describe('a sandbox organization’s payout (docs/decisions.md, "Mobile money in a sandbox")', () => {
  it('goes to a simulator test number through the sandbox Daraja only, completed once', async () => {
    const { payout } = await originate(
      w.determination({ environment: 'sandbox', phoneNumber: '+254722000091' }),
    );
    expect(payout).toMatchObject({ environment: 'sandbox', phone: '+254722000091' });
    await attempt(payout._id);
    expect([w.sandboxDaraja.b2cRequests.length, w.daraja.b2cRequests.length]).toEqual([1, 0]);
    const result = b2cResult(await ocidOf(payout._id), '0');
    // The simulator POSTs this number's Result twice: one completion.
    expect((await onB2cResult(result, w.callbackDeps())).outcome).toBe('COMPLETED');
    expect((await onB2cResult(result, w.callbackDeps())).outcome).toBe('DUPLICATE');
    expect(w.store.eventsOf(payout._id).map((e) => e.event)).toEqual(['payout.completed']);
  });

  it('refuses a farmer’s number that is not a test number with 400 on phoneNumber, writing and sending nothing', async () => {
    const determinationId = w.determination({ environment: 'sandbox', phoneNumber: '+254712345678' });
    const err = await originate(determinationId).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'INVALID_INPUT', details: [{ field: 'phoneNumber' }] });
    expect(await w.store.byDetermination(determinationId)).toBeNull();
    expect([w.quotes, w.sandboxDaraja.b2cRequests.length, w.daraja.b2cRequests.length]).toEqual([0, 0, 0]);
  });

  it('refuses where the platform has no sandbox Daraja (403), and a live payout still goes to the live one', async () => {
    const sandbox = w.determination({ environment: 'sandbox' });
    await expectRefusal(
      originatePayout(sandbox, { ...w.originateDeps(), sandboxDaraja: false }),
      'TIER_NOT_ENTITLED',
      403,
    );
    const { payout } = await originate(w.determination({ phoneNumber: '+254712345678' }));
    expect(payout.environment).toBeUndefined();
    await attempt(payout._id);
    expect([w.daraja.b2cRequests.length, w.sandboxDaraja.b2cRequests.length]).toEqual([1, 0]);
  });
});

describe('attempts and callbacks', () => {
  it('completes on a successful Result: one payout.completed with the receipt, and a summary', async () => {
    const { payout } = await originate(w.determination());
    await attempt(payout._id);
    expect((await stored(payout._id)).status).toBe('PROCESSING');
    const ocid = await ocidOf(payout._id);
    expect(ocid).toBe(payout._id);
    const result = b2cResult(ocid, '0');
    expect(await onB2cResult(result, w.callbackDeps())).toEqual({
      outcome: 'COMPLETED',
      payoutId: payout._id,
    });
    const done = await stored(payout._id);
    expect(done).toMatchObject({ status: 'COMPLETED', mobileMoneyRef: result.receipt });
    expect(w.store.eventsOf(payout._id).map((e) => e.event)).toEqual(['payout.completed']);
    expect(w.store.eventsOf(payout._id)[0]?.data).toMatchObject({
      amountKES: '5000.00',
      mobileMoneyRef: result.receipt,
    });
    const summaries = w.store.jobsOf('policy-summaries').map((j) => (j.payload as { status: string }).status);
    expect(summaries).toEqual(['PENDING', 'PROCESSING', 'COMPLETED']);
    // The same Result again changes nothing; another receipt for the paid part is a double payment for ops.
    expect((await onB2cResult(result, w.callbackDeps())).outcome).toBe('DUPLICATE');
    expect((await onB2cResult(b2cResult(ocid, '0'), w.callbackDeps())).outcome).toBe('PAID_TWICE');
    expect(w.store.eventsOf(payout._id)).toHaveLength(1);
  });

  it('pays every part once and sends one payout.completed naming every receipt', async () => {
    const { payout } = await originate(w.determination({ owedMinor: '60000000' }));
    const paid: string[] = [];
    for (const part of [1, 2, 3]) {
      expect(
        w.store.jobsOf('payout-attempts').filter((j) => (j.payload as { part: number }).part === part),
      ).toHaveLength(1);
      await attempt(payout._id, part);
      const r = b2cResult(await ocidOf(payout._id, part), '0');
      paid.push(r.receipt as string);
      await onB2cResult(r, w.callbackDeps());
      if (part < 3) expect((await stored(payout._id)).status).toBe('PROCESSING');
    }
    expect(w.daraja.b2cRequests.map((r) => r.amount)).toEqual([200_000, 200_000, 200_000]);
    expect(new Set(w.daraja.b2cRequests.map((r) => r.originatorConversationId)).size).toBe(3);
    const done = await stored(payout._id);
    expect(done).toMatchObject({ status: 'COMPLETED', mobileMoneyRef: paid.join(',') });
    const events = w.store.eventsOf(payout._id);
    expect(events.map((e) => e.event)).toEqual(['payout.completed']);
    expect(events[0]?.data).toMatchObject({ amountKES: '600000.00', mobileMoneyRef: paid.join(',') });
  });

  it('fails the payout when a part fails for good, and never sends the parts after it', async () => {
    const { payout } = await originate(w.determination({ owedMinor: '60000000' }));
    await sendAndAnswer(payout._id, 1, '0');
    const outcome = await sendAndAnswer(payout._id, 2, 'SFC_IC0003');
    expect(outcome.outcome).toBe('FAILED');
    const failed = await stored(payout._id);
    expect(failed).toMatchObject({ status: 'FAILED', reason: 'INVALID_PHONE' });
    expect(failed.parts.map((p) => p.status)).toEqual(['COMPLETED', 'FAILED', 'PENDING']);
    expect(await attempt(payout._id, 3)).toEqual({ kind: 'done' });
    expect(w.daraja.b2cRequests).toHaveLength(2);
    expect(w.store.eventsOf(payout._id).map((e) => e.event)).toEqual(['payout.failed']);
  });

  it('retries a retriable Result only after Transaction Status says the attempt paid nothing', async () => {
    const { payout } = await originate(w.determination());
    const first = await sendAndAnswer(payout._id, 1, '1'); // our balance: retriable
    expect(first.outcome).toBe('RETRY_SCHEDULED');
    expect(w.store.jobsOf('payout-attempts').map((j) => j.id)).toEqual([
      `${payout._id}-attempt-1`,
      `${payout._id}-attempt-2`,
    ]);
    // Before the backoff: nothing.
    expect(await attempt(payout._id)).toEqual({ kind: 'delay', until: w.nowMs + SETTINGS.retryBaseMs });
    w.advance(SETTINGS.retryBaseMs);
    // Then Transaction Status about attempt 1, and a wait for its answer.
    expect((await attempt(payout._id)).kind).toBe('delay');
    expect(w.daraja.statusRequests.map((r) => r.originatorConversationId)).toEqual([payout._id]);
    expect(w.daraja.b2cRequests).toHaveLength(1);
    expect((await attempt(payout._id)).kind).toBe('delay'); // still no answer: nothing sent
    const query = w.daraja.statusRequests[0]?.queryOcid as string;
    expect((await onStatusResult(statusResult(query, payout._id, 'Failed'), w.callbackDeps())).outcome).toBe(
      'NOT_COMPLETED',
    );
    await attempt(payout._id);
    expect(w.daraja.b2cRequests.map((r) => r.originatorConversationId)).toEqual([
      payout._id,
      `${payout._id}-2`,
    ]);
    const r = b2cResult(`${payout._id}-2`, '0');
    await onB2cResult(r, w.callbackDeps());
    expect(await stored(payout._id)).toMatchObject({ status: 'COMPLETED', mobileMoneyRef: r.receipt });
  });

  it('completes without paying again when Transaction Status finds the attempt paid', async () => {
    const { payout } = await originate(w.determination());
    await sendAndAnswer(payout._id, 1, '1');
    w.advance(SETTINGS.retryBaseMs);
    await attempt(payout._id);
    const query = w.daraja.statusRequests[0]?.queryOcid as string;
    await onStatusResult(statusResult(query, payout._id, 'Completed', 'SGRSTATUS01'), w.callbackDeps());
    expect(await attempt(payout._id)).toEqual({ kind: 'done' });
    expect(w.daraja.b2cRequests).toHaveLength(1);
    expect(await stored(payout._id)).toMatchObject({ status: 'COMPLETED', mobileMoneyRef: 'SGRSTATUS01' });
  });

  it('fails once the attempts are spent, with the last code’s reason', async () => {
    const { payout } = await originate(w.determination());
    for (let n = 1; n <= SETTINGS.maxAttempts; n++) {
      await attempt(payout._id);
      await onB2cResult(b2cResult(await ocidOf(payout._id), '2001'), w.callbackDeps());
      if (n === SETTINGS.maxAttempts) break;
      w.advance(SETTINGS.retryBaseMs * 2 ** (n - 1));
      await attempt(payout._id);
      const query = w.daraja.statusRequests.at(-1)?.queryOcid as string;
      await onStatusResult(statusResult(query, await ocidOf(payout._id), 'Failed'), w.callbackDeps());
    }
    expect(await stored(payout._id)).toMatchObject({ status: 'FAILED', reason: 'PROVIDER_ERROR' });
    expect(w.daraja.b2cOf(payout._id)).toHaveLength(SETTINGS.maxAttempts);
    expect(w.store.eventsOf(payout._id, 'payout.failed')).toHaveLength(1);
  });

  it('treats a QueueTimeOut as unknown: Transaction Status first, never a blind resend', async () => {
    const { payout } = await originate(w.determination());
    await attempt(payout._id);
    const outcome = await onB2cQueueTimeout(
      { originatorConversationId: payout._id, resultDesc: 'The service request timed out.' },
      w.callbackDeps(),
    );
    expect(outcome.outcome).toBe('STATUS_TO_ASK');
    expect((await stored(payout._id)).status).toBe('PROCESSING');
    await attempt(payout._id);
    expect(w.daraja.statusRequests).toHaveLength(1);
    expect(w.daraja.b2cRequests).toHaveLength(1);
    const query = w.daraja.statusRequests[0]?.queryOcid as string;
    // A status query that timed out is only recorded; the part asks again once the answer is late.
    expect((await onStatusTimeout({ originatorConversationId: query }, w.callbackDeps())).outcome).toBe(
      'STATUS_TIMED_OUT',
    );
    w.advance(SETTINGS.statusAnswerWaitMs + 1);
    await attempt(payout._id);
    expect(w.daraja.statusRequests).toHaveLength(2);
    expect(w.daraja.b2cRequests).toHaveLength(1);
  });

  it('never resends an id Daraja already took: DUPLICATE waits for its Result and asks Transaction Status', async () => {
    const { payout } = await originate(w.determination());
    w.daraja.answers.push('duplicate');
    await attempt(payout._id);
    const p = await stored(payout._id);
    expect(p.parts[0]).toMatchObject({ phase: 'AWAITING_RESULT', status: 'PROCESSING' });
    expect(w.daraja.statusRequests.map((r) => r.originatorConversationId)).toEqual([payout._id]);
    expect((await attempt(payout._id)).kind).toBe('delay');
    expect(w.daraja.b2cRequests).toHaveLength(1);
  });

  it('resends the same id after a transport failure, with a growing delay', async () => {
    const { payout } = await originate(w.determination());
    w.daraja.answers.push('unavailable', 'unavailable');
    expect(await attempt(payout._id)).toEqual({ kind: 'delay', until: w.nowMs + 1_000 });
    expect(await attempt(payout._id)).toEqual({ kind: 'delay', until: w.nowMs + 2_000 });
    await attempt(payout._id);
    expect(w.daraja.b2cRequests.map((r) => r.originatorConversationId)).toEqual([
      payout._id,
      payout._id,
      payout._id,
    ]);
    expect((await stored(payout._id)).status).toBe('PROCESSING');
  });

  it('fails a part Daraja refuses as made (PROVIDER_ERROR)', async () => {
    const { payout } = await originate(w.determination());
    w.daraja.answers.push('reject');
    await attempt(payout._id);
    expect(await stored(payout._id)).toMatchObject({ status: 'FAILED', reason: 'PROVIDER_ERROR' });
  });

  it('completes a part reported FAILED when its payment turns out to have been made', async () => {
    const { payout } = await originate(w.determination());
    await sendAndAnswer(payout._id, 1, '2040');
    expect((await stored(payout._id)).status).toBe('FAILED');
    const late = b2cResult(payout._id, '0');
    expect((await onB2cResult(late, w.callbackDeps())).outcome).toBe('COMPLETED');
    expect(await stored(payout._id)).toMatchObject({ status: 'COMPLETED', mobileMoneyRef: late.receipt });
    expect(w.store.eventsOf(payout._id).map((e) => e.event)).toEqual(['payout.failed', 'payout.completed']);
  });

  it('ignores a successful Result naming another amount than the part’s', async () => {
    const { payout } = await originate(w.determination());
    await attempt(payout._id);
    const forged = b2cResult(payout._id, '0', { amount: 50_000 });
    expect((await onB2cResult(forged, w.callbackDeps())).outcome).toBe('AMOUNT_MISMATCH');
    expect((await stored(payout._id)).status).toBe('PROCESSING');
    expect((await onB2cResult(b2cResult(payout._id, '0', { amount: 5_000 }), w.callbackDeps())).outcome).toBe(
      'COMPLETED',
    );
  });

  it('ignores callbacks for no payout of ours', async () => {
    expect(await onB2cResult(b2cResult('not-ours', '0'), w.callbackDeps())).toEqual({
      outcome: 'UNKNOWN_PAYOUT',
      payoutId: null,
    });
    expect(w.store.rows).toHaveLength(0);
  });

  it('retries a transition that lost a race instead of overwriting the other writer', async () => {
    const { payout } = await originate(w.determination());
    await attempt(payout._id);
    // Another writer moves the payout between our read and our write: ours is re-decided.
    w.store.interfere = (p) => {
      const part = p.parts[0];
      if (part) part.lastResultDesc = 'written by someone else';
    };
    await onB2cResult(b2cResult(payout._id, '0'), w.callbackDeps());
    const done = await stored(payout._id);
    expect(done.status).toBe('COMPLETED');
    expect(done.parts[0]?.lastResultDesc).toBe('written by someone else');
  });
});

describe('the partner’s retry', () => {
  const retry = (id: string) =>
    retryPayout({ payoutStore: w.store }, id, {
      findPolicy: w.originateDeps().findPolicy,
      maxAttempts: 2,
      now: w.now(),
    });

  it('sends only the failed part again, after Transaction Status, with a fresh budget', async () => {
    const { payout } = await originate(w.determination({ owedMinor: '50000000' })); // 2 × 250,000
    await sendAndAnswer(payout._id, 1, '0');
    await sendAndAnswer(payout._id, 2, '2040');
    expect((await stored(payout._id)).status).toBe('FAILED');
    const view = await retry(payout._id);
    expect(view.status).toBe('PROCESSING'); // a part is paid already
    expect(view.parts.map((p) => p.status)).toEqual(['COMPLETED', 'PENDING']);
    const retryJob = w.store.jobsOf('payout-attempts').at(-1);
    expect(retryJob?.payload).toEqual({ payoutId: payout._id, part: 2 });
    await attempt(payout._id, 2); // Transaction Status about the failed attempt first
    const query = w.daraja.statusRequests.at(-1)?.queryOcid as string;
    await onStatusResult(statusResult(query, `${payout._id}-p2-1`, 'Failed'), w.callbackDeps());
    await attempt(payout._id, 2);
    expect(w.daraja.b2cRequests.map((r) => r.originatorConversationId)).toEqual([
      payout._id,
      `${payout._id}-p2-1`,
      `${payout._id}-p2-2`,
    ]);
    await onB2cResult(b2cResult(`${payout._id}-p2-2`, '0'), w.callbackDeps());
    expect((await stored(payout._id)).status).toBe('COMPLETED');
    expect(w.store.eventsOf(payout._id).map((e) => e.event)).toEqual(['payout.failed', 'payout.completed']);
  });

  it('goes back to PENDING for a single-part payout, and refuses anything not FAILED', async () => {
    const { payout } = await originate(w.determination());
    await expectRefusal(retry(payout._id), 'CONFLICT', 409);
    await sendAndAnswer(payout._id, 1, '2040');
    expect((await retry(payout._id)).status).toBe('PENDING');
    await expectRefusal(retry(payout._id), 'CONFLICT', 409);
  });
});

describe('the payout ledger', () => {
  it('keeps every request, answer, Result and status check, once each, oldest first', async () => {
    const { payout } = await originate(w.determination());
    await attempt(payout._id);
    const failure = b2cResult(payout._id, '1');
    await onB2cResult(failure, w.callbackDeps());
    await onB2cResult(failure, w.callbackDeps()); // delivered twice: one row
    w.advance(SETTINGS.retryBaseMs);
    await attempt(payout._id);
    const query = w.daraja.statusRequests[0]?.queryOcid as string;
    w.advance(1_000);
    await onStatusResult(statusResult(query, payout._id, 'Failed'), w.callbackDeps());
    await attempt(payout._id);
    w.advance(1_000);
    const paid = b2cResult(`${payout._id}-2`, '0');
    await onB2cResult(paid, w.callbackDeps());
    const detail = await readPayout({ payoutStore: w.store, payoutLedger: w.store }, payout._id);
    expect(
      detail.attemptHistory.map((r) => [r.kind, r.attempt, r.originatorConversationId, r.resultCode]),
    ).toEqual([
      ['B2C_REQUEST', 1, payout._id, null],
      ['B2C_RESPONSE', 1, payout._id, '0'],
      ['B2C_RESULT', 1, payout._id, '1'],
      ['STATUS_QUERY', 1, payout._id, '0'],
      ['STATUS_RESULT', 1, payout._id, '0'],
      ['B2C_REQUEST', 2, `${payout._id}-2`, null],
      ['B2C_RESPONSE', 2, `${payout._id}-2`, '0'],
      ['B2C_RESULT', 2, `${payout._id}-2`, '0'],
    ]);
    expect(detail.attemptHistory[0]?.amountKES).toBe('5000.00');
    expect(detail.attemptHistory.at(-1)?.receipt).toBe(paid.receipt);
    expect(detail.attemptHistory[1]?.conversationId).toMatch(/^AG_/);
  });

  it('records a request before sending it, and does not send one it cannot record', async () => {
    const { payout } = await originate(w.determination());
    const append = w.store.append.bind(w.store);
    w.store.append = async () => {
      throw new Error('MongoDB is down');
    };
    await expect(attempt(payout._id)).rejects.toThrow('MongoDB is down');
    expect(w.daraja.b2cRequests).toHaveLength(0);
    w.store.append = append;
    await attempt(payout._id);
    expect(w.daraja.b2cRequests).toHaveLength(1);
  });
});
