export {
  generateSigningKeyPem,
  loadSigningKeys,
  type PublishedJwk,
  publishedKeySet,
  type SigningKeys,
} from './keys';
export {
  canonicalDeterminationBytes,
  evidenceHash,
  InvalidDeterminationPayloadError,
  type SignedDetermination,
  type SignedDeterminationPayload,
  signDetermination,
  signedDeterminationPayloadSchema,
} from './sign';
