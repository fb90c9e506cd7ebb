import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { CanonicalizationError, canonicalJson, evidenceHash, sha256Hex } from './canonical';
import { SANDBOX_KEY_MARK, SIGNED_FIELDS } from './fields';
import { decodeBase64url, jwkThumbprint } from './jwk';

export interface AmountOwed {
  /** Minor units of `currency`, a decimal integer string ("1250050"). */
  amountMinor: string;
  /** The same amount in major units, with exactly `exponent` decimals ("12500.50"). */
  amount: string;
  currency: string;
  exponent: number;
  damagePercentBp: number;
  /** How the amount was computed. */
  basis: string;
}

/** What the signature covers (the parsed `canonicalPayload`). */
export interface SignedDeterminationPayload {
  determinationId: string;
  policyId: string;
  policyNumber: string;
  kind: 'CROP_DAMAGE' | 'LIVESTOCK_MORTALITY_INDEX';
  methodologyVersion: string;
  triggered: boolean;
  /** Damage in basis points, 0..10000 (10000 = 100 %). */
  damagePercentBp: number;
  assessedAt: string;
  settlementMode: 'DETERMINATION' | 'DETERMINATION_AND_SETTLEMENT';
  settledByMicrocrop: boolean;
  amountOwed: AmountOwed | null;
  /** Only when `amountOwed` is null: `SETTLED_BY_SERVICE`, `CURRENCY_EXPONENT_UNREGISTERED`. */
  amountOwedUnavailableReason?: string;
  /** Lowercase hex SHA-256 of the canonical JSON of the evidence object. */
  evidenceHash: string;
}

export const REASON_CODES = [
  'MALFORMED_RECORD',
  'MALFORMED_JWKS',
  'UNKNOWN_KID',
  'KID_MISMATCH',
  'HASH_MISMATCH',
  'NOT_CANONICAL',
  'BAD_SIGNATURE',
  'FIELD_MISMATCH',
  'SANDBOX_KEY',
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

export type VerifyResult =
  /** `sandbox`: signed with a sandbox key (accepted only with `acceptSandbox`). */
  { valid: true; kid: string; sandbox: boolean } | { valid: false; reason: string; code: ReasonCode };

export interface VerifyOptions {
  /**
   * Accept a determination signed with a key the JWKS marks as a sandbox key
   * (`"environment": "sandbox"`): only in code that handles a sandbox organization's test
   * determinations. Off by default, so live code refuses them (SANDBOX_KEY) however they reach it.
   */
  acceptSandbox?: boolean;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const has = (object: Json, key: string) => Object.hasOwn(object, key);
const SHA256_HEX = /^[0-9a-f]{64}$/;
const ED25519_SIGNATURE_BYTES = 64;
const ED25519_PUBLIC_KEY_BYTES = 32;

function invalid(code: ReasonCode, reason: string): VerifyResult {
  return { valid: false, code, reason };
}

/** A value for a message: JSON, cut short. */
function show(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** The `data` of a `{ success, data }` envelope, or the record itself. */
function unwrapRecord(record: unknown): Json | string {
  if (!isObject(record)) return 'the record is not a JSON object';
  if (has(record, 'canonicalPayload')) return record;
  if (record.success === false) {
    const error = isObject(record.error) ? record.error : {};
    return `the record is an error response (${show(error.code ?? 'no code')}), not a determination`;
  }
  if (has(record, 'success') && isObject(record.data)) return record.data;
  return record;
}

function jwksKeys(jwks: unknown): unknown[] | undefined {
  if (!isObject(jwks)) return undefined;
  if (Array.isArray(jwks.keys)) return jwks.keys;
  // Tolerate the JWKS inside the API's `{ success, data }` envelope.
  if (isObject(jwks.data) && Array.isArray(jwks.data.keys)) return jwks.data.keys;
  return undefined;
}

/** Why a JWKS entry is not a usable Ed25519 verification key, or undefined if it is one. */
function unusableKey(jwk: Json): string | undefined {
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') {
    return `is not an Ed25519 key (kty ${show(jwk.kty)}, crv ${show(jwk.crv)})`;
  }
  if (has(jwk, 'd')) return 'carries private key material ("d"); a JWKS must hold public keys only';
  if (typeof jwk.x !== 'string' || decodeBase64url(jwk.x)?.length !== ED25519_PUBLIC_KEY_BYTES) {
    return 'has no valid "x" (32 bytes, base64url without padding)';
  }
  if (has(jwk, 'use') && jwk.use !== 'sig') return `is not a signing key (use ${show(jwk.use)})`;
  if (has(jwk, 'alg') && jwk.alg !== 'Ed25519' && jwk.alg !== 'EdDSA') {
    return `is for another algorithm (alg ${show(jwk.alg)})`;
  }
  return undefined;
}

/**
 * What a usable key (`OKP`, `Ed25519`, a valid `x`) gives, by its `x`: its RFC 7638 thumbprint
 * (which for such a key covers nothing else) and its key object. A verifier meets a handful of
 * keys, and the signer checks every determination it signs against the same JWKS: deriving
 * them per record was a fifth of that check (docs/performance.md). Bounded, as a JWKS is input.
 */
interface Ed25519Key {
  thumbprint: string;
  publicKey?: KeyObject;
}
const ed25519Keys = new Map<string, Ed25519Key>();
const MAX_KEYS_KEPT = 64;

function ed25519Key(jwk: Json): Ed25519Key {
  const x = jwk.x as string;
  let known = ed25519Keys.get(x);
  if (!known) {
    if (ed25519Keys.size >= MAX_KEYS_KEPT) ed25519Keys.clear();
    known = { thumbprint: jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x }) };
    ed25519Keys.set(x, known);
  }
  return known;
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
}

/** The signed payload against the fields the record shows beside it. */
function fieldMismatch(payload: Json, record: Json): string | undefined {
  const signed = new Set<string>(SIGNED_FIELDS);
  for (const key of Object.keys(payload)) {
    if (!signed.has(key)) return `the signed payload has ${show(key)}, which is not a determination field`;
  }
  for (const field of SIGNED_FIELDS) {
    const required = field !== 'amountOwedUnavailableReason' || payload.amountOwed === null;
    if (!has(payload, field)) {
      if (required) return `the signed payload lacks ${field}`;
      if (has(record, field)) return `the record shows ${field}, which the signed payload does not have`;
      continue;
    }
    if (!has(record, field)) return `the record does not show the signed field ${field}`;
    if (!sameJson(record[field], payload[field])) {
      return `${field} differs from the signed payload: the record shows ${show(record[field])}, the signature covers ${show(payload[field])}`;
    }
  }
  return undefined;
}

/**
 * Verifies a signed determination with nothing but the platform's JWKS
 * (`GET /api/.well-known/jwks.json`).
 *
 * `record` is the `data` of `GET /api/determinations/{id}` or the whole `{ success, data }`
 * response: the signed fields, plus `canonicalPayload` (the exact signed JCS text),
 * `canonicalHash`, `signature` and `kid`. Other fields (`links`, `partnerSettlementStatus`,
 * `dueAt`, `issuedAt`, ...) are not signed and are ignored.
 *
 * Checks, in order, each failing with its own code: the record and the JWKS have the right
 * shape (MALFORMED_RECORD, MALFORMED_JWKS); the JWKS has a key with the record's kid
 * (UNKNOWN_KID) whose RFC 7638 thumbprint is that kid (KID_MISMATCH: a JWKS entry's kid is not
 * trusted as given); the key is not a sandbox key, unless `acceptSandbox` (SANDBOX_KEY); sha256(canonicalPayload) is canonicalHash (HASH_MISMATCH);
 * canonicalPayload is its own RFC 8785 form (NOT_CANONICAL); the Ed25519 signature over its
 * UTF-8 bytes verifies (BAD_SIGNATURE); every signed field the record shows equals the signed
 * payload's, none is missing and the payload has nothing else (FIELD_MISMATCH, naming the
 * field). Never throws.
 */
export function verifyDetermination(
  record: unknown,
  jwks: unknown,
  options: VerifyOptions = {},
): VerifyResult {
  const unwrapped = unwrapRecord(record);
  if (typeof unwrapped === 'string') return invalid('MALFORMED_RECORD', unwrapped);
  const data = unwrapped;
  for (const member of ['canonicalPayload', 'canonicalHash', 'signature', 'kid'] as const) {
    if (typeof data[member] !== 'string' || data[member] === '') {
      return invalid('MALFORMED_RECORD', `the record has no ${member} (a non-empty string)`);
    }
  }
  const canonicalPayload = data.canonicalPayload as string;
  const canonicalHash = data.canonicalHash as string;
  const signature = data.signature as string;
  const kid = data.kid as string;
  if (!SHA256_HEX.test(canonicalHash)) {
    return invalid('MALFORMED_RECORD', 'canonicalHash is not a lowercase hex SHA-256 (64 characters)');
  }

  const keys = jwksKeys(jwks);
  if (!keys) return invalid('MALFORMED_JWKS', 'the JWKS is not a JSON object with a "keys" array');
  const candidates = keys.filter((k): k is Json => isObject(k) && k.kid === kid);
  if (candidates.length === 0) {
    const known = keys.flatMap((k) => (isObject(k) && typeof k.kid === 'string' ? [k.kid] : []));
    return invalid(
      'UNKNOWN_KID',
      `the JWKS has no key with kid ${kid} (it has ${known.length > 0 ? known.join(', ') : 'none'})`,
    );
  }
  const usable = candidates.filter((k) => unusableKey(k) === undefined);
  if (usable.length === 0) {
    return invalid('MALFORMED_JWKS', `the JWKS key ${kid} ${unusableKey(candidates[0] as Json)}`);
  }
  const jwk = usable.find((k) => ed25519Key(k).thumbprint === kid);
  if (!jwk) {
    return invalid(
      'KID_MISMATCH',
      `the JWKS key listed as ${kid} has thumbprint ${ed25519Key(usable[0] as Json).thumbprint}: its kid is not its own`,
    );
  }

  const sandbox = jwk[SANDBOX_KEY_MARK.member] === SANDBOX_KEY_MARK.value;
  if (sandbox && !options.acceptSandbox) {
    return invalid(
      'SANDBOX_KEY',
      `key ${kid} is a sandbox key: this is a sandbox organization's test determination, not a live one`,
    );
  }

  const bytes = Buffer.from(canonicalPayload, 'utf8');
  if (sha256Hex(bytes) !== canonicalHash) {
    return invalid('HASH_MISMATCH', 'canonicalHash is not the SHA-256 of canonicalPayload');
  }

  let payload: unknown;
  try {
    payload = JSON.parse(canonicalPayload);
  } catch {
    return invalid('NOT_CANONICAL', 'canonicalPayload is not JSON');
  }
  try {
    if (canonicalJson(payload) !== canonicalPayload) {
      return invalid('NOT_CANONICAL', 'canonicalPayload is not in RFC 8785 canonical form');
    }
  } catch (error) {
    const why = error instanceof CanonicalizationError ? error.message : 'it cannot be canonicalised';
    return invalid('NOT_CANONICAL', `canonicalPayload is not canonical JSON: ${why}`);
  }

  const signatureBytes = decodeBase64url(signature);
  if (signatureBytes?.length !== ED25519_SIGNATURE_BYTES) {
    return invalid('BAD_SIGNATURE', 'signature is not 64 bytes in base64url without padding');
  }
  const known = ed25519Key(jwk);
  if (!known.publicKey) {
    try {
      known.publicKey = createPublicKey({
        key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x as string },
        format: 'jwk',
      });
    } catch {
      return invalid('MALFORMED_JWKS', `the JWKS key ${kid} is not a valid Ed25519 public key`);
    }
  }
  const publicKey = known.publicKey;
  if (!verify(null, bytes, publicKey, signatureBytes)) {
    return invalid('BAD_SIGNATURE', `the signature does not verify with key ${kid}`);
  }

  if (!isObject(payload)) return invalid('FIELD_MISMATCH', 'the signed payload is not a JSON object');
  const mismatch = fieldMismatch(payload, data);
  if (mismatch) return invalid('FIELD_MISMATCH', mismatch);
  return { valid: true, kid, sandbox };
}

export type EvidenceResult =
  | { valid: true; evidenceHash: string }
  | { valid: false; reason: string; code: 'MALFORMED_RECORD' | 'MALFORMED_EVIDENCE' | 'EVIDENCE_MISMATCH' };

/**
 * Checks evidence (`data.evidence` of `GET /api/determinations/{id}/evidence`) against the
 * evidenceHash the determination's signature covers (taken from `canonicalPayload`, not the
 * displayed field). Verify the record with `verifyDetermination` first: this only compares
 * hashes.
 */
export function verifyEvidence(evidence: unknown, record: unknown): EvidenceResult {
  const data = unwrapRecord(record);
  if (typeof data === 'string') return { valid: false, code: 'MALFORMED_RECORD', reason: data };
  let signed: unknown;
  try {
    signed = typeof data.canonicalPayload === 'string' ? JSON.parse(data.canonicalPayload) : undefined;
  } catch {
    signed = undefined;
  }
  const expected = isObject(signed) ? signed.evidenceHash : undefined;
  if (typeof expected !== 'string' || !SHA256_HEX.test(expected)) {
    return {
      valid: false,
      code: 'MALFORMED_RECORD',
      reason: 'the record has no signed evidenceHash (in canonicalPayload)',
    };
  }
  if (!isObject(evidence)) {
    return { valid: false, code: 'MALFORMED_EVIDENCE', reason: 'the evidence is not a JSON object' };
  }
  let actual: string;
  try {
    actual = evidenceHash(evidence);
  } catch (error) {
    return { valid: false, code: 'MALFORMED_EVIDENCE', reason: (error as Error).message };
  }
  if (actual !== expected) {
    return {
      valid: false,
      code: 'EVIDENCE_MISMATCH',
      reason: `the evidence hashes to ${actual}; the determination signed ${expected}`,
    };
  }
  return { valid: true, evidenceHash: actual };
}
