import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical';

/** An Ed25519 public key as a JWK (RFC 8037), as the platform's JWKS publishes it. */
export interface Ed25519PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  /** The 32-byte public key, base64url without padding. */
  x: string;
  /** RFC 7638 thumbprint of `{ crv, kty, x }`. */
  kid: string;
  use?: 'sig';
  alg?: 'Ed25519';
}

/** RFC 7638: the members each key type's thumbprint covers. */
const THUMBPRINT_MEMBERS: Record<string, readonly string[]> = {
  OKP: ['crv', 'kty', 'x'],
  EC: ['crv', 'kty', 'x', 'y'],
  RSA: ['e', 'kty', 'n'],
  oct: ['k', 'kty'],
};

/**
 * RFC 7638 JWK thumbprint: base64url (no padding) of the SHA-256 of the required members of
 * the key, in lexicographic order, without whitespace. For the platform's Ed25519 keys that is
 * `{"crv":"Ed25519","kty":"OKP","x":"…"}`; the result is the key's `kid`. Other members
 * (`kid`, `use`, `alg`) do not count. Throws on a key type it does not know or a missing member.
 */
export function jwkThumbprint(jwk: { kty: string; [member: string]: unknown }): string {
  const members = THUMBPRINT_MEMBERS[jwk.kty];
  if (!members) throw new Error(`no RFC 7638 thumbprint is defined for kty ${JSON.stringify(jwk.kty)}`);
  const required: Record<string, string> = {};
  for (const member of members) {
    const value = jwk[member];
    if (typeof value !== 'string' || value === '') {
      throw new Error(`the JWK lacks its "${member}" member (a string)`);
    }
    required[member] = value;
  }
  return createHash('sha256').update(canonicalJson(required), 'utf8').digest('base64url');
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * The bytes of a base64url string (no padding) if it is the one canonical encoding of them,
 * else undefined. Node's decoder ignores stray characters and non-zero trailing bits, so
 * several strings would otherwise decode to the same bytes.
 */
export function decodeBase64url(text: string): Buffer | undefined {
  if (!BASE64URL.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}
