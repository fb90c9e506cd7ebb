import { sign } from 'node:crypto';
import { SANDBOX_KEY_MARK } from '@parametric/determination-verify';
import { generateEd25519KeyPem, loadEd25519Keys, type PublishedJwk } from '@parametric/ed25519-keys';

export type { PublishedJwk };

export interface SigningKeys {
  /**
   * `sandbox`: the keys of sandbox organizations' test determinations, published marked
   * `"environment": "sandbox"` so live verifiers refuse what they sign (determination-verify's
   * SANDBOX_KEY).
   */
  readonly environment: 'live' | 'sandbox';
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
export function loadSigningKeys(pemBundle: string, environment: 'live' | 'sandbox' = 'live'): SigningKeys {
  const bundle = loadEd25519Keys(
    pemBundle,
    environment === 'live' ? 'determination signing keys' : 'sandbox signing keys',
  );
  const signer = bundle.activePrivateKey;
  const mark = environment === 'sandbox' ? { [SANDBOX_KEY_MARK.member]: SANDBOX_KEY_MARK.value } : {};
  return Object.freeze({
    environment,
    activeKid: bundle.activeKid,
    sign: (bytes: Uint8Array) => sign(null, bytes, signer).toString('base64url'),
    // Typed as plain arrays (what the JWKS route serialises), frozen all the same.
    jwks: Object.freeze({
      keys: Object.freeze(bundle.keys.map((k) => Object.freeze({ ...k.jwk, ...mark }))) as PublishedJwk[],
    }),
  });
}

/**
 * The key set the platform publishes (`GET /api/.well-known/jwks.json`): the live keys, then the
 * sandbox keys, marked. A sandbox key that is also a live key is refused: a test determination
 * must never verify as a live one.
 */
export function publishedKeySet(live: SigningKeys, sandbox?: SigningKeys): { keys: PublishedJwk[] } {
  if (!sandbox) return live.jwks;
  const liveKids = new Set(live.jwks.keys.map((k) => k.kid));
  const shared = sandbox.jwks.keys.find((k) => liveKids.has(k.kid));
  if (shared) throw new Error(`sandbox signing key ${shared.kid} is also a live determination signing key`);
  return Object.freeze({ keys: Object.freeze([...live.jwks.keys, ...sandbox.jwks.keys]) as PublishedJwk[] });
}

/** A fresh Ed25519 private key as PKCS#8 PEM: `npm start` makes one per run, tests make their own. */
export const generateSigningKeyPem = generateEd25519KeyPem;
