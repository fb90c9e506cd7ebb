import { z } from 'zod';

// The partner API's events (docs/webhooks.md, "Events"): every event a partner can receive and
// the exact `data` it carries. Strict objects, because whatever passes here is sent to partners verbatim: an
// unknown field is a leak or a typo, never something to forward.

const text = z.string().min(1);
const timestamp = z.iso.datetime({ offset: true });
const basisPoints = z.number().int().min(0).max(10_000);
/** An integer amount in minor units, as a string so it survives JSON without rounding. */
const minorUnits = z.string().regex(/^\d+$/, 'expected an integer amount in minor units, as a string');
/**
 * A major-unit amount as a decimal string ("1250.50"). Payout amounts use this too: the spec
 * does not type them, they reach partners through JSON webhooks, and USDC carries 6 decimals,
 * so a JSON number would invite float rounding on the partner's side.
 */
const decimalAmount = z.string().regex(/^\d+(\.\d+)?$/, 'expected a decimal amount as a string');
const currencyCode = z.string().regex(/^[A-Z]{3}$/, 'expected an ISO 4217 currency code');

const amountOwed = z.strictObject({
  amountMinor: minorUnits,
  amount: decimalAmount,
  currency: currencyCode,
  exponent: z.number().int().min(0),
  damagePercentBp: basisPoints,
  basis: text,
});

const determinationDelivered = z
  .strictObject({
    determinationId: z.uuid(),
    policyId: text,
    policyNumber: text,
    kind: text,
    methodologyVersion: text,
    triggered: z.boolean(),
    damagePercentBp: basisPoints,
    assessedAt: timestamp,
    canonicalHash: text,
    settlementMode: text,
    settledByMicrocrop: z.boolean(),
    amountOwed: amountOwed.nullable(),
    amountOwedUnavailableReason: text.optional(),
    links: z.strictObject({ self: text, evidence: text }),
  })
  // The spec: the reason is "present instead of a value", so exactly one of the two.
  .superRefine((data, ctx) => {
    if (data.amountOwed === null && data.amountOwedUnavailableReason === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['amountOwedUnavailableReason'],
        message: 'required when amountOwed is null',
      });
    }
    if (data.amountOwed !== null && data.amountOwedUnavailableReason !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['amountOwedUnavailableReason'],
        message: 'only allowed when amountOwed is null',
      });
    }
  });

const settlementReport = z.strictObject({
  id: text,
  partnerReference: text,
  outcome: text,
  method: text,
  settledAmountMinor: minorUnits,
  settlementCurrency: currencyCode,
  settledAt: timestamp,
  reportedAt: timestamp,
  supersedesReportId: text.nullable(),
});

const settlementReportRecorded = z
  .strictObject({
    determinationId: z.uuid(),
    policyId: text,
    policyNumber: text,
    settlementMode: text,
    settledByMicrocrop: z.boolean(),
    verifiedByMicrocrop: z.boolean(),
    verificationStatus: text,
    partnerSettlementStatus: text,
    report: settlementReport,
    correction: z.boolean(),
    links: z.strictObject({ determination: text, settlementReport: text }),
    note: text,
  })
  // docs/webhooks.md, "Events": a receiver replaces its stored attestation by
  // `supersedesReportId` when `correction` is true, so the two must agree or the partner
  // corrects the wrong report.
  .superRefine((data, ctx) => {
    if (data.correction !== (data.report.supersedesReportId !== null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['report', 'supersedesReportId'],
        message: 'must be set exactly when correction is true',
      });
    }
  });

const settlementReportOverdue = z.strictObject({
  determinationId: z.uuid(),
  policyId: text,
  policyNumber: text,
  settlementMode: text,
  settledByMicrocrop: z.boolean(),
  partnerSettlementStatus: text,
  dueAt: timestamp,
  determinedAt: timestamp,
  links: z.record(z.string(), z.string()),
  note: text,
});

export const EVENT_CATALOG = {
  'policy.activated': z.strictObject({
    policyId: text,
    onChainPolicyId: text,
    policyNumber: text,
    farmerId: z.uuid(),
    // Major units, a JSON number: the `Policy` schema types it `number` and the purchase body sends it so.
    sumInsured: z.number().positive(),
    txHash: text,
  }),
  'determination.delivered': determinationDelivered,
  'determination.settlement_report_recorded': settlementReportRecorded,
  'determination.settlement_report_overdue': settlementReportOverdue,
  'payout.completed': z.strictObject({
    payoutId: text,
    policyId: text,
    amountUSDC: decimalAmount,
    amountKES: decimalAmount,
    mobileMoneyRef: text,
  }),
  'payout.failed': z.strictObject({
    payoutId: text,
    policyId: text,
    amountUSDC: decimalAmount,
    reason: text,
  }),
  // The status is fixed by the event itself; a mismatch would tell the partner two things at once.
  'kyb.verified': z.strictObject({
    organizationId: z.uuid(),
    kybStatus: z.literal('VERIFIED'),
  }),
  'kyb.rejected': z.strictObject({
    organizationId: z.uuid(),
    kybStatus: z.literal('REJECTED'),
    notes: z.string().nullable(),
  }),
} as const;

export type EventName = keyof typeof EVENT_CATALOG;
export type EventData<N extends EventName> = z.infer<(typeof EVENT_CATALOG)[N]>;

export const EVENT_NAMES = Object.keys(EVENT_CATALOG) as [EventName, ...EventName[]];

export function isEventName(name: string): name is EventName {
  return Object.hasOwn(EVENT_CATALOG, name);
}
