/**
 * The SDK's `verifyDetermination` is libs/determination-verify's (reused, not copied): checked
 * here against determinations signed by that package's independent test signer.
 */
import * as determinationVerify from '@parametric/determination-verify';
import { jwksOf, signedRecord, testKey, tier1Payload } from '../../../determination-verify/test/helpers';
import { verifyDetermination } from '../../src';

describe('verifyDetermination', () => {
  it('is the determination-verify library itself', () => {
    expect(verifyDetermination).toBe(determinationVerify.verifyDetermination);
  });

  it('accepts a signed determination, alone or in its response envelope, and refuses a changed one', () => {
    const key = testKey();
    const record = signedRecord(tier1Payload(), key);
    expect(verifyDetermination(record, jwksOf(key))).toMatchObject({ valid: true, kid: key.kid });
    expect(verifyDetermination({ success: true, data: record }, jwksOf(key))).toMatchObject({
      valid: true,
      kid: key.kid,
    });
    expect(verifyDetermination({ ...record, damagePercentBp: 9999 }, jwksOf(key))).toMatchObject({
      valid: false,
      code: 'FIELD_MISMATCH',
    });
    expect(verifyDetermination(record, jwksOf(testKey()))).toMatchObject({
      valid: false,
      code: 'UNKNOWN_KID',
    });
  });

  it('refuses a sandbox-signed determination unless told to accept sandbox', () => {
    const key = testKey();
    const record = signedRecord(tier1Payload(), key);
    const jwks = { keys: [{ ...key.jwk, environment: 'sandbox' }] };
    expect(verifyDetermination(record, jwks)).toMatchObject({ valid: false, code: 'SANDBOX_KEY' });
    expect(verifyDetermination(record, jwks, { acceptSandbox: true })).toMatchObject({
      valid: true,
      sandbox: true,
    });
  });
});
