import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { jwkThumbprint } from '@parametric/determination-verify';
import { generateSigningKeyPem, loadSigningKeys, publishedKeySet } from '../../../src/signing';

const publicPemOf = (privatePem: string) =>
  createPublicKey(privatePem).export({ format: 'pem', type: 'spki' }) as string;

/** The base64 lines of a PEM: what must never appear in an error message. */
const bodyLines = (pem: string) => pem.split('\n').filter((line) => line !== '' && !line.startsWith('-----'));

function loadError(bundle: string): Error {
  try {
    loadSigningKeys(bundle);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected loadSigningKeys to refuse the bundle');
}

describe('loadSigningKeys', () => {
  it('makes the one private key the active signer, published as an Ed25519 JWK whose kid is its thumbprint', () => {
    const keys = loadSigningKeys(generateSigningKeyPem());
    expect(keys.jwks.keys).toHaveLength(1);
    const [jwk] = keys.jwks.keys;
    expect(Object.keys(jwk ?? {}).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    expect(jwk).toMatchObject({
      kty: 'OKP',
      crv: 'Ed25519',
      use: 'sig',
      alg: 'Ed25519',
      kid: keys.activeKid,
    });
    expect(keys.activeKid).toBe(jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: jwk?.x as string }));
  });

  it('signs with the active key: base64url Ed25519 that verifies with the published key', () => {
    const keys = loadSigningKeys(generateSigningKeyPem());
    const message = Buffer.from('{"a":1}', 'utf8');
    const signature = keys.sign(message);
    expect(signature).toMatch(/^[A-Za-z0-9_-]{86}$/);
    const publicKey = createPublicKey({ key: { ...keys.jwks.keys[0] }, format: 'jwk' });
    expect(verify(null, message, publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
    expect(verify(null, Buffer.from('{"a":2}'), publicKey, Buffer.from(signature, 'base64url'))).toBe(false);
  });

  it('publishes retired keys after the active one, in order, private or public, and never signs with them', () => {
    const active = generateSigningKeyPem();
    const retiredPrivate = generateSigningKeyPem();
    const retiredPublic = publicPemOf(generateSigningKeyPem());
    const keys = loadSigningKeys([active, retiredPrivate, retiredPublic].join('\n'));
    const kids = keys.jwks.keys.map((k) => k.kid);
    expect(kids).toEqual([
      loadSigningKeys(active).activeKid,
      loadSigningKeys(retiredPrivate).activeKid,
      jwkThumbprint(createPublicKey(retiredPublic).export({ format: 'jwk' }) as { kty: string }),
    ]);
    expect(keys.activeKid).toBe(kids[0]);
    const message = Buffer.from('x');
    const signature = Buffer.from(keys.sign(message), 'base64url');
    const verifiesWith = keys.jwks.keys.map((k) =>
      verify(null, message, createPublicKey({ key: { ...k }, format: 'jwk' }), signature),
    );
    expect(verifiesWith).toEqual([true, false, false]);
  });

  it('publishes no private key material', () => {
    const keys = loadSigningKeys([generateSigningKeyPem(), generateSigningKeyPem()].join('\n'));
    for (const jwk of keys.jwks.keys) expect(jwk).not.toHaveProperty('d');
    expect(JSON.stringify(keys)).not.toMatch(/PRIVATE|"d"/);
  });

  it('reads literal \\n escapes (as environment variables carry PEMs), CRLF and surrounding blank lines', () => {
    const active = generateSigningKeyPem();
    const retired = publicPemOf(generateSigningKeyPem());
    const expected = loadSigningKeys(`${active}${retired}`).jwks;
    expect(loadSigningKeys(`${active}${retired}`.replace(/\n/g, '\\n')).jwks).toEqual(expected);
    expect(loadSigningKeys(`\r\n\r\n${active}${retired}`.replace(/\n/g, '\r\n')).jwks).toEqual(expected);
    expect(loadSigningKeys(`\n  ${active}\n\n${retired}\n\n`).jwks).toEqual(expected);
  });

  it('keeps its JWKS frozen: a caller cannot add or change a published key', () => {
    const keys = loadSigningKeys(generateSigningKeyPem());
    expect(() => keys.jwks.keys.push(keys.jwks.keys[0] as never)).toThrow(TypeError);
    expect(() => {
      (keys.jwks.keys[0] as { kid: string }).kid = 'mine';
    }).toThrow(TypeError);
  });

  it('gives a fresh key each time it generates one', () => {
    expect(loadSigningKeys(generateSigningKeyPem()).activeKid).not.toBe(
      loadSigningKeys(generateSigningKeyPem()).activeKid,
    );
  });

  describe('refuses, naming the block and never echoing key material', () => {
    const ed25519 = generateSigningKeyPem();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const rsaPkcs8 = rsa.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const rsaPkcs1 = rsa.privateKey.export({ format: 'pem', type: 'pkcs1' }) as string;
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ecPublic = ec.publicKey.export({ format: 'pem', type: 'spki' }) as string;
    const ecSec1 = ec.privateKey.export({ format: 'pem', type: 'sec1' }) as string;
    const ed448 = generateKeyPairSync('ed448').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const x25519Public = generateKeyPairSync('x25519').publicKey.export({
      format: 'pem',
      type: 'spki',
    }) as string;
    const lines = ed25519.trimEnd().split('\n');
    const corrupted = [lines[0], `${(lines[1] as string).slice(0, 10)}!!!!`, ...lines.slice(2)].join('\n');

    it.each([
      ['an empty value', '', /no PEM block found/],
      ['text without any block', 'not a key at all', /no PEM block found/],
      [
        'a public key first',
        publicPemOf(ed25519),
        /block 1 \(-----BEGIN PUBLIC KEY-----\) must be the active signer/,
      ],
      ['an RSA key first', rsaPkcs8, /block 1 is an rsa key; only Ed25519 keys are accepted/],
      ['an Ed448 key first', ed448, /block 1 is an ed448 key/],
      ['an EC public key retired', `${ed25519}${ecPublic}`, /block 2 is an ec key/],
      ['an X25519 (not a signing) key retired', `${ed25519}${x25519Public}`, /block 2 is an x25519 key/],
      [
        'a PKCS#1 RSA key',
        `${ed25519}${rsaPkcs1}`,
        /block 2 \(-----BEGIN RSA PRIVATE KEY-----\) is not accepted: only PKCS#8/,
      ],
      ['a SEC1 EC key', `${ed25519}${ecSec1}`, /block 2 \(-----BEGIN EC PRIVATE KEY-----\) is not accepted/],
      [
        'a certificate',
        `${ed25519}-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n`,
        /block 2 \(-----BEGIN CERTIFICATE-----\) is not accepted/,
      ],
      ['a block that does not parse', corrupted, /block 1 is not a valid PKCS#8 private key/],
      [
        'a block whose END does not match',
        ed25519.replace('END PRIVATE KEY', 'END PUBLIC KEY'),
        /block 1 begins as PRIVATE KEY but ends as PUBLIC KEY/,
      ],
      ['a block without an END', ed25519.replace('-----END PRIVATE KEY-----', ''), /no PEM block found/],
      ['the same private key twice', `${ed25519}${ed25519}`, /block 2 is the same key as block 1/],
      [
        'a retired public key that is the active key',
        `${ed25519}${publicPemOf(ed25519)}`,
        /block 2 is the same key as block 1/,
      ],
      [
        'text between blocks',
        `${ed25519}garbage\n${publicPemOf(generateSigningKeyPem())}`,
        /text that is not a PEM block before block 2/,
      ],
      ['text after the blocks', `${ed25519}garbage`, /text that is not a PEM block after block 1/],
    ])('%s', (_name, bundle, message) => {
      const error = loadError(bundle);
      expect(error.message).toMatch(message);
      expect(error.message).toMatch(/^determination signing keys: /);
      for (const pem of [ed25519, rsaPkcs8, rsaPkcs1, ecPublic, ecSec1, ed448, x25519Public, corrupted]) {
        for (const line of bodyLines(pem)) expect(error.message).not.toContain(line);
      }
    });

    it('a value that is not a string', () => {
      expect(loadError(undefined as unknown as string).message).toMatch(/not a string/);
    });
  });
});

describe('sandbox signing keys (issue 27)', () => {
  it('publishes the sandbox keys after the live ones, marked "environment": "sandbox"', () => {
    const live = loadSigningKeys(generateSigningKeyPem());
    const sandbox = loadSigningKeys(generateSigningKeyPem(), 'sandbox');
    const published = publishedKeySet(live, sandbox);
    expect(published.keys.map((k) => [k.kid, (k as { environment?: string }).environment])).toEqual([
      [live.activeKid, undefined],
      [sandbox.activeKid, 'sandbox'],
    ]);
    expect(publishedKeySet(live)).toBe(live.jwks);
  });

  it('refuses a sandbox key that is also a live key: a test determination must never verify as live', () => {
    const pem = generateSigningKeyPem();
    const live = loadSigningKeys(pem);
    expect(() => publishedKeySet(live, loadSigningKeys(pem, 'sandbox'))).toThrow(
      `sandbox signing key ${live.activeKid} is also a live determination signing key`,
    );
  });
});
