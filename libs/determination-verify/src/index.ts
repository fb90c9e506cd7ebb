export { DETERMINATION_VERIFY_BIN } from './bin-path';
export { CanonicalizationError, canonicalBytes, canonicalJson, evidenceHash, sha256Hex } from './canonical';
export { decodeBase64url, type Ed25519PublicJwk, jwkThumbprint } from './jwk';
export {
  type AmountOwed,
  type EvidenceResult,
  REASON_CODES,
  type ReasonCode,
  SIGNED_FIELDS,
  type SignedDeterminationPayload,
  type SignedField,
  type VerifyResult,
  verifyDetermination,
  verifyEvidence,
} from './verify';
