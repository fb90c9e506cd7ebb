export { DETERMINATION_VERIFY_BIN } from './bin-path';
export { CanonicalizationError, canonicalBytes, canonicalJson, evidenceHash, sha256Hex } from './canonical';
export { SANDBOX_KEY_MARK, SIGNED_FIELDS, type SignedField } from './fields';
export { decodeBase64url, type Ed25519PublicJwk, jwkThumbprint } from './jwk';
export {
  type AmountOwed,
  type EvidenceResult,
  REASON_CODES,
  type ReasonCode,
  type SignedDeterminationPayload,
  type VerifyOptions,
  type VerifyResult,
  verifyDetermination,
  verifyEvidence,
} from './verify';
