import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { verifyDetermination as verifyOnServer } from '@parametric/determination-verify';
import {
  jwksOf,
  signedRecord,
  testKey,
  tier1Payload,
  tier2Payload,
} from '../../../../libs/determination-verify/test/helpers';
import { verifyDetermination as verifyInBrowser } from '../../src/verify';

/**
 * The dashboard's in-browser verifier (WebCrypto, which Node has too) against the platform's
 * reference verifier, libs/determination-verify (whose field list it imports): the same verdict on
 * genuine and tampered records.
 */

it('takes from the library only its node-free field list, which imports nothing (no node:crypto in the page)', () => {
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? sources(path.join(dir, entry.name)) : [path.join(dir, entry.name)],
    );
  const specifiers = sources(path.join(__dirname, '..', '..', 'src')).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/from '(@parametric\/[^']+)'/g)].map((m) => m[1]),
  );
  expect(specifiers).toEqual(['@parametric/determination-verify/src/fields']);
  const fields = readFileSync(require.resolve('@parametric/determination-verify/src/fields'), 'utf8');
  expect(fields).not.toMatch(/^\s*(import|export .* from)\b|require\(/m);
});

const key = testKey();
const jwks = jwksOf(key);

it.each([
  ['Tier 1', tier1Payload()],
  ['Tier 2', tier2Payload()],
])('accepts a genuine %s record, as the reference does', async (_tier, payload) => {
  const record = signedRecord(payload, key);
  expect(verifyOnServer(record, jwks)).toEqual({ valid: true, kid: key.kid, sandbox: false });
  await expect(verifyInBrowser(record, jwks)).resolves.toEqual({ valid: true, kid: key.kid, sandbox: false });
});

it('refuses a sandbox-signed record unless asked to accept it, as the reference does', async () => {
  const sandboxKey = testKey();
  const published = { keys: [key.jwk, { ...sandboxKey.jwk, environment: 'sandbox' }] };
  const record = signedRecord(tier1Payload(), sandboxKey);
  expect(verifyOnServer(record, published).valid).toBe(false);
  await expect(verifyInBrowser(record, published)).resolves.toMatchObject({ valid: false });
  expect(verifyOnServer(record, published, { acceptSandbox: true })).toEqual({
    valid: true,
    kid: sandboxKey.kid,
    sandbox: true,
  });
  await expect(verifyInBrowser(record, published, { acceptSandbox: true })).resolves.toEqual({
    valid: true,
    kid: sandboxKey.kid,
    sandbox: true,
  });
});

const tampered: Array<[string, (record: Record<string, unknown>) => void]> = [
  ['a displayed signed field changed', (r) => (r.damagePercentBp = Number(r.damagePercentBp) + 1)],
  ['the amount owed changed', (r) => (r.amountOwed = { ...(r.amountOwed as object), amount: '999999.00' })],
  [
    'the signed payload changed',
    (r) => (r.canonicalPayload = String(r.canonicalPayload).replace('"triggered":true', '"triggered":false')),
  ],
  [
    'the signature changed',
    // One bit of its bytes, re-encoded: always another signature (replacing its last characters
    // with fixed ones left it unchanged whenever it already ended with them, 1 run in 256).
    (r) => {
      const bytes = Buffer.from(String(r.signature), 'base64url');
      bytes[0] = (bytes[0] as number) ^ 0x01;
      r.signature = bytes.toString('base64url');
    },
  ],
  ['another kid', (r) => (r.kid = 'not-the-key')],
  ['the hash changed', (r) => (r.canonicalHash = '0'.repeat(64))],
];

it.each(tampered)('refuses a record with %s, as the reference does', async (_what, tamper) => {
  const record = signedRecord(tier1Payload(), key);
  tamper(record);
  expect(verifyOnServer(record, jwks).valid).toBe(false);
  await expect(verifyInBrowser(record, jwks)).resolves.toMatchObject({ valid: false });
});

it('refuses a key whose kid is not its thumbprint', async () => {
  const record = signedRecord(tier1Payload(), key);
  const other = testKey();
  const forged = { keys: [{ ...jwksOf(other).keys[0], kid: key.kid }] };
  await expect(verifyInBrowser(record, forged)).resolves.toMatchObject({ valid: false });
});
