// No imports, node:crypto least of all: the partner dashboard's in-browser verifier
// (services/dashboard/src/verify.ts) imports this module into its page bundle.

/**
 * The fields a determination's signature covers, in the order the docs list them (JCS sorts
 * them anyway). `amountOwedUnavailableReason` is present exactly when `amountOwed` is null.
 */
export const SIGNED_FIELDS = [
  'determinationId',
  'policyId',
  'policyNumber',
  'kind',
  'methodologyVersion',
  'triggered',
  'damagePercentBp',
  'assessedAt',
  'settlementMode',
  'settledByMicrocrop',
  'amountOwed',
  'amountOwedUnavailableReason',
  'evidenceHash',
] as const;
export type SignedField = (typeof SIGNED_FIELDS)[number];

/** How a JWKS marks the keys that sign sandbox organizations' test determinations. */
export const SANDBOX_KEY_MARK = { member: 'environment', value: 'sandbox' } as const;
