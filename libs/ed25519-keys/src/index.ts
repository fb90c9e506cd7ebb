import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { type Ed25519PublicJwk, jwkThumbprint } from '@parametric/determination-verify';

/** A verification key as published in a JWKS. */
export type PublishedJwk = Required<Ed25519PublicJwk>;

/** What a configured bundle holds: the active signer first, then retired keys (verify only). */
export interface Ed25519KeyBundle {
  /** RFC 7638 thumbprint of the active key: the `kid` of everything signed now. */
  readonly activeKid: string;
  readonly activePrivateKey: KeyObject;
  /** Every key, active first then the retired ones in configured order. */
  readonly keys: ReadonlyArray<{ kid: string; jwk: PublishedJwk; publicKey: KeyObject }>;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]{1,40})-----([\s\S]*?)-----END ([A-Z0-9 ]{1,40})-----/g;
const PRIVATE = 'PRIVATE KEY';
const PUBLIC = 'PUBLIC KEY';

function ordinal(n: number): string {
  return `block ${n}`;
}

/** The public JWK (RFC 8037) of an Ed25519 key, with its RFC 7638 thumbprint as kid. */
function publishedJwk(key: KeyObject, problem: (message: string) => Error): PublishedJwk {
  const { crv, kty, x } = key.export({ format: 'jwk' });
  if (kty !== 'OKP' || crv !== 'Ed25519' || typeof x !== 'string') {
    throw problem('a key did not export as an Ed25519 JWK');
  }
  const base = { kty: 'OKP', crv: 'Ed25519', x } as const;
  return Object.freeze({ ...base, kid: jwkThumbprint(base), use: 'sig', alg: 'Ed25519' });
}

/**
 * Ed25519 keys from one configuration value: PEM blocks, one after the other
 * (newline-separated; literal `\n` escapes, as environment variables often carry them, count
 * as newlines).
 *
 * - Block 1 is the active signer: an Ed25519 PKCS#8 private key (`-----BEGIN PRIVATE KEY-----`).
 * - Further blocks are retired keys: still accepted for verification (and published), never
 *   used to sign. Each is an Ed25519 PKCS#8 private key or an SPKI public key
 *   (`-----BEGIN PUBLIC KEY-----`); only the public half is kept.
 *
 * Rotation: put a new private key first and move the old one (or its public key) after it.
 * Throws an Error starting with `what` and naming the offending block for no blocks, text
 * outside the blocks, another PEM type, a key that does not parse, a non-Ed25519 key, a first
 * block that is not a private key, or the same key twice. Messages never contain key material.
 */
export function loadEd25519Keys(pemBundle: string, what: string): Ed25519KeyBundle {
  const problem = (message: string) => new Error(`${what}: ${message}`);
  if (typeof pemBundle !== 'string') throw problem('the configuration value is not a string');
  const text = pemBundle.replace(/\\r\\n|\\n/g, '\n').replace(/\r\n/g, '\n');
  const blocks: Array<{ label: string; pem: string; n: number }> = [];
  let end = 0;
  for (const match of text.matchAll(PEM_BLOCK)) {
    const n = blocks.length + 1;
    if (text.slice(end, match.index).trim() !== '') {
      throw problem(`there is text that is not a PEM block before ${ordinal(n)}`);
    }
    const [pem, label, , endLabel] = match as unknown as [string, string, string, string];
    if (label !== endLabel) throw problem(`${ordinal(n)} begins as ${label} but ends as ${endLabel}`);
    blocks.push({ label, pem, n });
    end = (match.index ?? 0) + pem.length;
  }
  if (text.slice(end).trim() !== '') {
    throw problem(
      blocks.length === 0
        ? 'no PEM block found (expected an Ed25519 private key, -----BEGIN PRIVATE KEY-----)'
        : `there is text that is not a PEM block after ${ordinal(blocks.length)}`,
    );
  }
  if (blocks.length === 0) {
    throw problem('no PEM block found (expected an Ed25519 private key, -----BEGIN PRIVATE KEY-----)');
  }

  const keys: Array<{ jwk: PublishedJwk; publicKey: KeyObject; privateKey?: KeyObject }> = [];
  for (const { label, pem, n } of blocks) {
    if (n === 1 && label !== PRIVATE) {
      throw problem(
        `${ordinal(1)} (-----BEGIN ${label}-----) must be the active signer, an Ed25519 PKCS#8 private key (-----BEGIN PRIVATE KEY-----)`,
      );
    }
    if (label !== PRIVATE && label !== PUBLIC) {
      throw problem(
        `${ordinal(n)} (-----BEGIN ${label}-----) is not accepted: only PKCS#8 private keys (-----BEGIN PRIVATE KEY-----) and SPKI public keys (-----BEGIN PUBLIC KEY-----)`,
      );
    }
    let key: KeyObject;
    try {
      key =
        label === PRIVATE
          ? createPrivateKey({ key: pem, format: 'pem' })
          : createPublicKey({ key: pem, format: 'pem' });
    } catch {
      throw problem(
        `${ordinal(n)} is not a valid ${label === PRIVATE ? 'PKCS#8 private' : 'SPKI public'} key`,
      );
    }
    if (key.asymmetricKeyType !== 'ed25519') {
      throw problem(
        `${ordinal(n)} is an ${key.asymmetricKeyType ?? 'unknown'} key; only Ed25519 keys are accepted`,
      );
    }
    const publicKey = key.type === 'private' ? createPublicKey(key) : key;
    const jwk = publishedJwk(publicKey, problem);
    const earlier = keys.findIndex((k) => k.jwk.kid === jwk.kid);
    if (earlier !== -1) throw problem(`${ordinal(n)} is the same key as ${ordinal(earlier + 1)}`);
    keys.push(n === 1 ? { jwk, publicKey, privateKey: key } : { jwk, publicKey });
  }

  const active = keys[0] as { jwk: PublishedJwk; publicKey: KeyObject; privateKey: KeyObject };
  return Object.freeze({
    activeKid: active.jwk.kid,
    activePrivateKey: active.privateKey,
    keys: Object.freeze(keys.map(({ jwk, publicKey }) => Object.freeze({ kid: jwk.kid, jwk, publicKey }))),
  });
}

/** A fresh Ed25519 private key as PKCS#8 PEM: `npm start` makes one per run, tests make their own. */
export function generateEd25519KeyPem(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
}
