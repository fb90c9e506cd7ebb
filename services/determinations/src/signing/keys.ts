import { sign } from 'node:crypto';
import { generateEd25519KeyPem, loadEd25519Keys, type PublishedJwk } from '@parametric/ed25519-keys';

export type { PublishedJwk };

export interface SigningKeys {
  /** RFC 7638 thumbprint of the active key: the `kid` of every determination signed now. */
  readonly activeKid: string;
  /** Ed25519 signature of `bytes` with the active key, base64url without padding. */
  sign(bytes: Uint8Array): string;
  /**
   * Every key, active first then the retired ones in configured order: the body of
   * `GET /api/.well-known/jwks.json`. Frozen (changing it throws).
   */
  readonly jwks: { keys: PublishedJwk[] };
}

/**
 * The determination signing keys (DETERMINATION_SIGNING_KEYS): PEM blocks, the first signs,
 * the rest are retired keys published in the JWKS so the determinations they signed keep
 * verifying (`loadEd25519Keys` has the rules and the refusals).
 */
export function loadSigningKeys(pemBundle: string): SigningKeys {
  const bundle = loadEd25519Keys(pemBundle, 'determination signing keys');
  const signer = bundle.activePrivateKey;
  return Object.freeze({
    activeKid: bundle.activeKid,
    sign: (bytes: Uint8Array) => sign(null, bytes, signer).toString('base64url'),
    // Typed as plain arrays (what the JWKS route serialises), frozen all the same.
    jwks: Object.freeze({ keys: Object.freeze(bundle.keys.map((k) => k.jwk)) as PublishedJwk[] }),
  });
}

/** A fresh Ed25519 private key as PKCS#8 PEM: `npm start` makes one per run, tests make their own. */
export const generateSigningKeyPem = generateEd25519KeyPem;
