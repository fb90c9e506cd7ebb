import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Unbiased base62 from crypto-random bytes (rejection sampling). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/**
 * A one-time secret (invitation or refresh token): `prefix_` and 43 base62 characters
 * (256 bits), stored only as `hashCredential` of it.
 */
export function randomSecret(prefix: string): string {
  return `${prefix}_${randomBase62(43)}`;
}

/** How a credential came to exist; shows in a live key's prefix, which is not part of the contract. */
export type KeyOrigin = 'reg' | 'rot' | 'ops';

/** The organization's environment (organizations/model.ts): a sandbox credential says so. */
export type KeyEnvironment = 'sandbox' | 'live';

export interface IssuedCredentials {
  apiKey: string;
  apiSecret: string;
  /** What the api_keys collection stores of them (api-keys/model.ts). */
  record: { keyHash: string; secretHash: string; keyPrefix: string; last4: string };
}

/**
 * A new key (238 bits of entropy) and secret, and what we store of them. A sandbox
 * organization's key starts `pik_sandbox_` and its secret `pis_sandbox_` (docs/decisions.md,
 * "Sandbox credentials"), so a partner, a log reader or a secret scanner tells them from live ones
 * at a glance; the stored `keyPrefix` is that whole marker. Authentication looks keys up by hash
 * alone, so the prefix changes nothing there.
 */
export function issueCredentials(
  pepper: string,
  origin: KeyOrigin,
  environment: KeyEnvironment = 'live',
): IssuedCredentials {
  const sandbox = environment === 'sandbox';
  const apiKey = sandbox ? `pik_sandbox_${origin}_${randomBase62(40)}` : `pik_${origin}_${randomBase62(40)}`;
  const apiSecret = sandbox ? `pis_sandbox_${randomBase62(48)}` : `pis_${randomBase62(48)}`;
  return {
    apiKey,
    apiSecret,
    record: {
      keyHash: hashCredential(pepper, apiKey),
      secretHash: hashCredential(pepper, apiSecret),
      keyPrefix: apiKey.slice(0, 12),
      last4: apiKey.slice(-4),
    },
  };
}

/**
 * Keys are long random strings, so a keyed fast hash is the right tool (no need for a slow
 * password hash); the pepper keeps a leaked database from confirming guesses offline.
 */
export function hashCredential(pepper: string, value: string): string {
  return createHmac('sha256', pepper).update(value).digest('hex');
}

/** Equality of two hex hashes in constant time (a stored key hash against a presented one). */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Whether a presented secret (the ops token) is the expected one: the time taken depends on the
 * lengths, never on where the bytes differ.
 */
export function sameSecret(presented: string, expected: Buffer): boolean {
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
