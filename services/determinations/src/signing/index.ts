export { generateSigningKeyPem, loadSigningKeys, type PublishedJwk, type SigningKeys } from './keys';
export {
  canonicalDeterminationBytes,
  evidenceHash,
  InvalidDeterminationPayloadError,
  type SignedDetermination,
  type SignedDeterminationPayload,
  signDetermination,
  signedDeterminationPayloadSchema,
} from './sign';
