import { SANDBOX_KEY_MARK, SIGNED_FIELDS } from '@parametric/determination-verify/src/fields';
import canonicalize from 'canonicalize';

/**
 * A determination's signature, checked in the browser (issue 28: "the partner's own proof, not
 * the server's word"). The same checks as libs/determination-verify/src/verify.ts, which is
 * Node's (node:crypto) and so cannot ship in a page: the key's RFC 7638 thumbprint is its kid,
 * `canonicalHash` is the SHA-256 of `canonicalPayload`, `canonicalPayload` is its own RFC 8785
 * form, the Ed25519 signature over its UTF-8 bytes verifies (WebCrypto), and every signed field
 * the record shows is the signed one. The signed field list and the sandbox mark are the library's
 * own (its node-free src/fields.ts); services/dashboard/test/unit/verify.test.ts runs both
 * verifiers on the same records.
 */

/** `sandbox`: signed with a key the JWKS marks `"environment": "sandbox"` (a test determination). */
export type Verification = { valid: true; kid: string; sandbox: boolean } | { valid: false; reason: string };

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const invalid = (reason: string): Verification => ({ valid: false, reason });

const encoder = new TextEncoder();

function base64url(bytes: ArrayBuffer | Uint8Array): string {
  let binary = '';
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The bytes of a canonical base64url string (no padding), or undefined. */
function fromBase64url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
    const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
    return base64url(bytes) === text ? bytes : undefined;
  } catch {
    return undefined;
  }
}

const hex = (buffer: ArrayBuffer) =>
  [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');

function canonical(value: unknown): string | undefined {
  try {
    return canonicalize(value);
  } catch {
    return undefined;
  }
}

function fieldMismatch(payload: Json, record: Json): string | undefined {
  const signed = new Set<string>(SIGNED_FIELDS);
  for (const key of Object.keys(payload)) if (!signed.has(key)) return `the signed payload has ${key}`;
  for (const field of SIGNED_FIELDS) {
    const required = field !== 'amountOwedUnavailableReason' || payload.amountOwed === null;
    if (!Object.hasOwn(payload, field)) {
      if (required) return `the signed payload lacks ${field}`;
      if (Object.hasOwn(record, field)) return `the record shows ${field}, which was not signed`;
      continue;
    }
    if (!Object.hasOwn(record, field)) return `the record does not show the signed field ${field}`;
    if (canonical(record[field]) !== canonical(payload[field]))
      return `${field} differs from what was signed`;
  }
  return undefined;
}

/** Verifies `record` (a determination's `data`) against `jwks` (the platform's published keys). Never throws. */
export async function verifyDetermination(
  record: unknown,
  jwks: unknown,
  options: { acceptSandbox?: boolean } = {},
): Promise<Verification> {
  if (!isObject(record)) return invalid('the record is not an object');
  const { canonicalPayload, canonicalHash, signature, kid } = record;
  if (typeof canonicalPayload !== 'string' || typeof signature !== 'string' || typeof kid !== 'string')
    return invalid('the record has no canonicalPayload, signature or kid');
  const keys = isObject(jwks) && Array.isArray(jwks.keys) ? jwks.keys : undefined;
  if (!keys) return invalid('the published keys are not a JWKS');
  const jwk = keys.find((key): key is Json => isObject(key) && key.kid === kid);
  if (jwk?.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string')
    return invalid(`no Ed25519 key ${kid} among the published keys`);
  try {
    const thumbprint = base64url(
      await crypto.subtle.digest(
        'SHA-256',
        encoder.encode(canonical({ crv: jwk.crv, kty: jwk.kty, x: jwk.x })),
      ),
    );
    if (thumbprint !== kid) return invalid(`the key listed as ${kid} is not that key`);
    // As the reference verifier (libs/determination-verify): a sandbox key only when asked.
    const sandbox = jwk[SANDBOX_KEY_MARK.member] === SANDBOX_KEY_MARK.value;
    if (sandbox && !options.acceptSandbox) return invalid(`key ${kid} is a sandbox key`);
    const bytes = encoder.encode(canonicalPayload);
    if (
      typeof canonicalHash === 'string' &&
      hex(await crypto.subtle.digest('SHA-256', bytes)) !== canonicalHash
    )
      return invalid('canonicalHash is not the SHA-256 of the signed payload');
    let payload: unknown;
    try {
      payload = JSON.parse(canonicalPayload);
    } catch {
      return invalid('the signed payload is not JSON');
    }
    if (canonical(payload) !== canonicalPayload)
      return invalid('the signed payload is not RFC 8785 canonical JSON');
    const signatureBytes = fromBase64url(signature);
    if (signatureBytes?.length !== 64) return invalid('the signature is not 64 bytes of base64url');
    const key = await crypto.subtle.importKey(
      'jwk',
      { kty: 'OKP', crv: 'Ed25519', x: jwk.x },
      { name: 'Ed25519' },
      false,
      ['verify'],
    );
    if (!(await crypto.subtle.verify({ name: 'Ed25519' }, key, signatureBytes, bytes)))
      return invalid('the Ed25519 signature does not verify');
    if (!isObject(payload)) return invalid('the signed payload is not an object');
    const mismatch = fieldMismatch(payload, record);
    if (mismatch) return invalid(mismatch);
    return { valid: true, kid, sandbox };
  } catch (error) {
    return invalid(`this browser could not check it (${(error as Error).message})`);
  }
}
