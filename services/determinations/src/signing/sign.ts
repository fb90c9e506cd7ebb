import { DETERMINATION_KINDS, SETTLEMENT_MODES } from '@parametric/contracts';
import {
  canonicalBytes,
  canonicalJson,
  evidenceHash as hashEvidence,
  sha256Hex,
  type SignedDeterminationPayload as VerifierPayload,
  verifyDetermination,
} from '@parametric/determination-verify';
import { formatMinor, MAX_EXPONENT } from '@parametric/money';
import { z } from 'zod';
import type { SigningKeys } from './keys';

/**
 * Strings are signed exactly as given: JCS does no Unicode normalisation, so a string a
 * partner's system might normalise (NFC) differently would stop matching. We sign NFC only;
 * normalise at ingestion.
 */
const text = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => s === s.normalize('NFC'), 'must be Unicode NFC (normalise it before signing)');
const basisPoints = z.int().min(0).max(10_000);

const amountOwedSchema = z.strictObject({
  amountMinor: z.string().regex(/^(0|[1-9]\d*)$/, 'must be a non-negative integer string in minor units'),
  amount: z.string(),
  currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code'),
  exponent: z.int().min(0).max(MAX_EXPONENT),
  damagePercentBp: basisPoints,
  basis: text(500),
});

/**
 * What a determination's signature covers (docs/determinations.md, "Signed fields"). Checked
 * before signing, because a signed record never changes: a determination that breaks these
 * rules is refused rather than signed.
 */
export const signedDeterminationPayloadSchema = z
  .strictObject({
    determinationId: z.uuid(),
    policyId: z.uuid(),
    policyNumber: text(200),
    kind: z.enum(DETERMINATION_KINDS),
    methodologyVersion: text(200),
    triggered: z.boolean(),
    damagePercentBp: basisPoints,
    assessedAt: z.iso.datetime({ offset: true }),
    settlementMode: z.enum(SETTLEMENT_MODES),
    settledByMicrocrop: z.boolean(),
    amountOwed: amountOwedSchema.nullable(),
    amountOwedUnavailableReason: z
      .string()
      .regex(/^[A-Z][A-Z0-9_]*$/, 'must be an UPPER_SNAKE_CASE reason')
      .max(100)
      .optional(),
    evidenceHash: z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256'),
  })
  .superRefine((d, ctx) => {
    const issue = (path: PropertyKey[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    if (!d.triggered && d.damagePercentBp !== 0) issue(['damagePercentBp'], 'must be 0 when not triggered');
    const tier2 = d.settlementMode === 'DETERMINATION_AND_SETTLEMENT';
    if (d.settledByMicrocrop !== tier2) {
      issue(['settledByMicrocrop'], `must be ${tier2} for settlementMode ${d.settlementMode}`);
    }
    if (d.amountOwed === null) {
      if (d.amountOwedUnavailableReason === undefined) {
        issue(['amountOwedUnavailableReason'], 'is required when amountOwed is null');
      }
    } else {
      if (d.amountOwedUnavailableReason !== undefined) {
        issue(['amountOwedUnavailableReason'], 'must be absent when amountOwed is given');
      }
      const { amountMinor, amount, exponent, damagePercentBp } = d.amountOwed;
      if (/^(0|[1-9]\d*)$/.test(amountMinor) && amount !== formatMinor(BigInt(amountMinor), exponent)) {
        issue(
          ['amountOwed', 'amount'],
          `must be ${formatMinor(BigInt(amountMinor), exponent)} (amountMinor, exponent)`,
        );
      }
      if (damagePercentBp !== d.damagePercentBp) {
        issue(['amountOwed', 'damagePercentBp'], 'must equal the determination damagePercentBp');
      }
    }
    if (
      d.settledByMicrocrop &&
      (d.amountOwed !== null || d.amountOwedUnavailableReason !== 'SETTLED_BY_SERVICE')
    ) {
      issue(
        ['amountOwed'],
        'must be null with amountOwedUnavailableReason SETTLED_BY_SERVICE when the service settles',
      );
    }
    if (!d.settledByMicrocrop && d.amountOwedUnavailableReason === 'SETTLED_BY_SERVICE') {
      issue(['amountOwedUnavailableReason'], 'SETTLED_BY_SERVICE is for determinations the service settles');
    }
  });

export type SignedDeterminationPayload = z.infer<typeof signedDeterminationPayloadSchema>;

// The type the service signs is the one partners' verifier describes, both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
true satisfies Same<SignedDeterminationPayload, VerifierPayload>;

export interface SignedDetermination {
  /** The exact signed text: RFC 8785 canonical JSON of the payload. */
  canonicalPayload: string;
  /** Lowercase hex SHA-256 of the UTF-8 bytes of canonicalPayload. */
  canonicalHash: string;
  /** Ed25519 over those bytes, base64url without padding. */
  signature: string;
  /** RFC 7638 thumbprint of the signing key, as published in the JWKS. */
  kid: string;
}

/** A payload the service refuses to sign, with every rule it breaks. */
export class InvalidDeterminationPayloadError extends Error {
  override readonly name = 'InvalidDeterminationPayloadError';
  constructor(readonly issues: z.core.$ZodIssue[]) {
    super(
      `refusing to sign the determination: ${issues
        .map((i) => `${i.path.length > 0 ? i.path.join('.') : 'payload'}: ${i.message}`)
        .join('; ')}`,
    );
  }
}

/** The payload checked and reduced to exactly the signed fields (no `undefined` members). */
function signedPayload(payload: SignedDeterminationPayload): SignedDeterminationPayload {
  const parsed = signedDeterminationPayloadSchema.safeParse(payload);
  if (!parsed.success) throw new InvalidDeterminationPayloadError(parsed.error.issues);
  const { amountOwedUnavailableReason, ...rest } = parsed.data;
  return amountOwedUnavailableReason === undefined ? rest : { ...rest, amountOwedUnavailableReason };
}

/**
 * The bytes a determination's signature covers: UTF-8 of the RFC 8785 canonical JSON of the
 * payload. Throws InvalidDeterminationPayloadError for a payload that breaks the signed
 * fields' rules, CanonicalizationError for a value JCS cannot represent (a lone surrogate).
 */
export function canonicalDeterminationBytes(payload: SignedDeterminationPayload): Uint8Array {
  return canonicalBytes(signedPayload(payload));
}

/**
 * `evidenceHash` of an evidence object: lowercase hex SHA-256 of its RFC 8785 canonical JSON.
 * Throws CanonicalizationError (naming where) for NaN, Infinity, lone surrogates, `undefined`
 * members, dates and other non-JSON values.
 */
export function evidenceHash(evidence: object): string {
  return hashEvidence(evidence);
}

/**
 * Freezes a determination: canonicalises the payload (RFC 8785), hashes it and signs it with
 * the active key. Before returning it verifies the result exactly as a partner would, against
 * the published JWKS, and throws if that fails: nothing unverifiable is ever handed out.
 */
export function signDetermination(
  payload: SignedDeterminationPayload,
  keys: SigningKeys,
): SignedDetermination {
  const signed = signedPayload(payload);
  const canonicalPayload = canonicalJson(signed);
  const bytes = Buffer.from(canonicalPayload, 'utf8');
  const result: SignedDetermination = {
    canonicalPayload,
    canonicalHash: sha256Hex(bytes),
    signature: keys.sign(bytes),
    kid: keys.activeKid,
  };
  const check = verifyDetermination({ ...signed, ...result }, keys.jwks, {
    acceptSandbox: keys.environment === 'sandbox',
  });
  if (!check.valid) {
    throw new Error(
      `a determination signature did not verify against the JWKS (${check.code}: ${check.reason})`,
    );
  }
  return result;
}
