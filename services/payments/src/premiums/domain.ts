import { randomUUID } from 'node:crypto';
import {
  type initiatePaymentBody,
  mobileMoneyMarketsText,
  mobileMoneyOf,
  type PAYMENT_FAILURE_REASONS,
  type paymentsQuery,
} from '@parametric/contracts';
import { AppError } from '@parametric/http';
import { formatMinor, MoneyError, minorFromNumber } from '@parametric/money';
import { isDuplicateKey } from '@parametric/mongo';
import type { PolicyLookup } from '@parametric/policy-client';
import { outboxJob, policyActivationJobId, withOutboxJobs } from '@parametric/queue';
import type { z } from 'zod';
import { type PremiumState, premiumStateOf } from '../metrics';
import type { AllPayments, TenantPayments } from '../repositories';
import { type ByEnvironment, type Environment, providerOf, requireSandboxTestNumber } from '../sandbox';
import type { TransactionDoc } from './model';
import type { PremiumProvider } from './provider';

type FailureReason = (typeof PAYMENT_FAILURE_REASONS)[number];

export interface InitiateDeps {
  findPolicy: PolicyLookup;
  /** Each environment's Daraja: a sandbox organization's prompt goes through its own. */
  providers: ByEnvironment<PremiumProvider>;
  /** The STK callback URL, secret token included. */
  callbackUrl: string;
  now: Date;
  /** Counts `premium_collections_total{state="initiated"}` once the prompt is sent and recorded. */
  onPremium?: (state: PremiumState) => void;
}

export interface Initiated {
  /** False when a prompt for the policy was already pending: that transaction, no new prompt. */
  created: boolean;
  transaction: TransactionDoc;
}

/**
 * Sends an STK push prompt for a Tier 2 policy's premium. Every gate runs before anything is
 * written or sent, in this order: the policy is the caller's (404), Tier 2 (403
 * TIER_NOT_ENTITLED), for a sandbox organization a sandbox Daraja (403 TIER_NOT_ENTITLED) and
 * a test number (400 on `phoneNumber`), a market we collect in (400), PENDING and unpaid (409),
 * the amount is the premium (400). A provider failure leaves nothing behind (502 PAYMENT_ERROR).
 */
export async function initiatePremium(
  tenant: TenantPayments,
  caller: { market: string; environment: Environment },
  body: z.output<typeof initiatePaymentBody>,
  deps: InitiateDeps,
): Promise<Initiated> {
  const { market } = caller;
  const policyId = (body.reference ?? body.policyId) as string;
  const policy = await deps.findPolicy({ policyId });
  if (!policy || policy.organizationId !== tenant.organizationId) throw AppError.notFound('Policy');
  if (policy.settlementMode !== 'DETERMINATION_AND_SETTLEMENT') {
    throw new AppError(
      'TIER_NOT_ENTITLED',
      'This policy is settled by the partner (Tier 1, DETERMINATION): the service collects no premium for it',
    );
  }
  // Either says sandbox: the organization's signed environment, or the policy's from its sale.
  const environment: Environment =
    caller.environment === 'sandbox' || policy.environment === 'sandbox' ? 'sandbox' : 'live';
  const provider = providerOf(deps.providers, environment);
  if (!provider) {
    throw new AppError(
      'TIER_NOT_ENTITLED',
      'This platform collects no premiums for sandbox organizations (it has no sandbox M-Pesa configuration)',
    );
  }
  requireSandboxTestNumber(environment, body.phoneNumber, 'phoneNumber');
  // The markets with mobile money are declared once (libs/contracts, MOBILE_MONEY), with the
  // gateway's rule that only they become Tier 2; this guards an organization made Tier 2 before it.
  const currency = mobileMoneyOf(market)?.currency;
  if (!currency || policy.currency !== currency) {
    throw AppError.invalid(`Mobile-money premium collection is not available in market ${market} yet`, [
      {
        field: 'reference',
        message: `the policy is in ${policy.currency}; premiums are collected in ${mobileMoneyMarketsText()} only`,
      },
    ]);
  }
  if (policy.status !== 'PENDING' || policy.premiumPaid) {
    throw AppError.conflict(
      `The policy is ${policy.premiumPaid ? 'already paid' : policy.status}: no premium is due`,
    );
  }
  const premiumMinor = BigInt(policy.premiumMinor);
  const premium = formatMinor(premiumMinor, policy.exponent);
  if (amountMinorOf(body.amount, policy.exponent) !== premiumMinor) {
    throw AppError.invalid('The amount is not the premium', [
      { field: 'amount', message: `must be the policy premium, ${premium} ${policy.currency}` },
    ]);
  }
  const unit = 10n ** BigInt(policy.exponent);
  if (premiumMinor % unit !== 0n) {
    // Tier 2 premiums are priced in whole shillings (docs/pricing.md); an older one is not.
    throw AppError.invalid('M-Pesa collects whole shillings only, and this premium has cents', [
      { field: 'amount', message: `${premium} ${policy.currency} cannot be collected by M-Pesa` },
    ]);
  }

  const transaction: Omit<TransactionDoc, 'organizationId' | 'createdAt' | 'updatedAt'> = {
    _id: randomUUID(),
    policyId: policy.id,
    policyNumber: policy.policyNumber,
    orderId: orderIdOf(policy.policyNumber),
    provider: 'MPESA',
    currency: policy.currency,
    amountMinor: premiumMinor.toString(),
    phoneNumber: body.phoneNumber,
    ...(environment === 'sandbox' ? { environment } : {}),
    status: 'PENDING',
    merchantRequestId: null,
    checkoutRequestId: null,
    promptSentAt: null,
    callbackReceivedAt: null,
    mpesaReceiptNumber: null,
    providerResultCode: null,
    failureReason: null,
    confirmedAt: null,
    resolvedBy: null,
    jobOutbox: [],
    jobOutboxPending: false,
  };
  try {
    await tenant.transactions.create(transaction);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    // A prompt for this policy is pending (this call raced another, or repeats it): no second prompt.
    const pending = await tenant.transactions.findOne({ policyId: policy.id, status: 'PENDING' }).lean();
    if (!pending) throw err;
    return { created: false, transaction: pending as TransactionDoc };
  }

  let sent: Awaited<ReturnType<PremiumProvider['stkPush']>>;
  try {
    sent = await provider.stkPush({
      amount: Number(premiumMinor / unit),
      phone: body.phoneNumber,
      accountReference: transaction.orderId,
      description: 'Premium',
      callbackUrl: deps.callbackUrl,
    });
  } catch (err) {
    // Nothing half-written: the partner may simply try again.
    await tenant.transactions.deleteOne({ _id: transaction._id, status: 'PENDING', checkoutRequestId: null });
    throw new AppError(
      'PAYMENT_ERROR',
      `M-Pesa could not send the payment prompt, try again shortly (${(err as Error).message})`,
    );
  }
  const updated = await tenant.transactions.findOneAndUpdate(
    { _id: transaction._id },
    {
      $set: {
        merchantRequestId: sent.merchantRequestId,
        checkoutRequestId: sent.checkoutRequestId,
        promptSentAt: deps.now,
      },
    },
  );
  deps.onPremium?.('initiated');
  return { created: true, transaction: updated as TransactionDoc };
}

/** Exactly, or not at all: a premium with more decimals than the currency has is refused. */
function amountMinorOf(amount: number, exponent: number): bigint {
  try {
    return minorFromNumber(amount, exponent);
  } catch (err) {
    if (err instanceof MoneyError) {
      throw AppError.invalid('Invalid amount', [{ field: 'amount', message: err.message }]);
    }
    throw err;
  }
}

/** Daraja's AccountReference holds at most 12 characters: the policy number's distinctive part. */
function orderIdOf(policyNumber: string): string {
  return policyNumber.replace(/[^A-Za-z0-9]/g, '').slice(-12);
}

/** What a confirmed outcome does to a pending transaction (callback and sweep alike). */
export type Outcome =
  | { succeeded: true; receipt: string | null; resultCode: 0 }
  | { succeeded: false; reason: FailureReason; resultCode: number | null };

/**
 * Resolves a PENDING transaction once, whoever gets there first (the callback or the sweep): a
 * success credits it and records the `policy-activations` job in the same update, so the
 * activation cannot be lost between the two; a failure records the stable reason. Returns the
 * transaction when this call resolved it, null when it was already resolved.
 */
export async function resolvePremium(
  data: Pick<AllPayments, 'transactions'>,
  transactionId: string,
  outcome: Outcome,
  by: 'CALLBACK' | 'RECONCILIATION',
  now: Date,
  /** Called once when this call resolved the transaction (`premium_collections_total`). */
  onPremium?: (state: PremiumState) => void,
): Promise<TransactionDoc | null> {
  const resolved = await resolveOnce(data, transactionId, outcome, by, now);
  if (resolved) onPremium?.(premiumStateOf(outcome));
  return resolved;
}

async function resolveOnce(
  data: Pick<AllPayments, 'transactions'>,
  transactionId: string,
  outcome: Outcome,
  by: 'CALLBACK' | 'RECONCILIATION',
  now: Date,
): Promise<TransactionDoc | null> {
  const pending = { _id: transactionId, status: 'PENDING' as const };
  if (!outcome.succeeded) {
    return data.transactions
      .findOneAndUpdate(
        pending,
        {
          $set: {
            status: 'FAILED',
            failureReason: outcome.reason,
            providerResultCode: outcome.resultCode,
            resolvedBy: by,
          },
        },
        { returnDocument: 'after' },
      )
      .lean<TransactionDoc>();
  }
  const t = await data.transactions.findById(transactionId).lean<TransactionDoc>();
  if (t?.status !== 'PENDING') return null;
  const job = outboxJob(
    'policy-activations',
    { policyId: t.policyId, organizationId: t.organizationId, paymentId: t._id },
    policyActivationJobId(t.policyId),
  );
  return data.transactions
    .findOneAndUpdate(
      pending,
      withOutboxJobs(
        {
          $set: {
            status: 'SUCCEEDED',
            mpesaReceiptNumber: outcome.receipt,
            providerResultCode: 0,
            confirmedAt: now,
            resolvedBy: by,
          },
        },
        job,
      ),
      { returnDocument: 'after' },
    )
    .lean<TransactionDoc>();
}

/** The partner's view of one payment. */
export function paymentView(t: TransactionDoc) {
  return {
    transactionId: t._id,
    reference: t.policyId,
    policyId: t.policyId,
    orderId: t.orderId,
    provider: 'MPESA' as const,
    status: t.status,
    amount: formatMinor(BigInt(t.amountMinor), 2),
    currency: t.currency,
    phoneNumber: `${t.phoneNumber.slice(0, 5)}•••••${t.phoneNumber.slice(-3)}`,
    mpesaReceiptNumber: t.mpesaReceiptNumber ?? null,
    failureReason: (t.failureReason ?? null) as FailureReason | null,
    providerResultCode: t.providerResultCode ?? null,
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
    confirmedAt: t.confirmedAt ? t.confirmedAt.toISOString() : null,
  };
}

/** The answer to `POST /payments/initiate` (docs/payments.md, "Premium collection"). */
export function initiationView(t: TransactionDoc) {
  const amount = formatMinor(BigInt(t.amountMinor), 2);
  return {
    transactionId: t._id,
    reference: t.policyId,
    orderId: t.orderId,
    provider: 'MPESA' as const,
    status: t.status,
    instructions:
      t.status === 'PENDING'
        ? `An M-Pesa prompt for ${t.currency} ${amount} (account ${t.orderId}) was sent to the phone: the customer enters their M-Pesa PIN to pay. The policy is activated once the payment is confirmed (policy.activated).`
        : `This payment is ${t.status}.`,
  };
}

/** A page of the organization's premium payments, newest first; every filter given narrows it. */
export async function listPayments(tenant: TenantPayments, query: z.output<typeof paymentsQuery>) {
  const { page, limit, ...filters } = query;
  const { items, total } = await tenant.transactions.listPage(filters, { page, limit });
  return { items: items.map(paymentView), total };
}

export async function readPayment(tenant: TenantPayments, id: string) {
  const t = await tenant.transactions.findById(id).lean();
  if (!t) throw AppError.notFound('Payment');
  return paymentView(t as TransactionDoc);
}
