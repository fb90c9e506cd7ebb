import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { SIGNED_FIELDS, verifyDetermination, verifyEvidence } from '../../src';
import { jwksOf, signedRecord, signText, testKey, tier1Payload, tier2Payload } from '../helpers';

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const key = testKey();
const jwks = jwksOf(key);

function invalidWith(result: ReturnType<typeof verifyDetermination>) {
  if (result.valid) throw new Error('expected the record to be rejected');
  return result;
}

describe('verifyDetermination: sandbox keys', () => {
  const sandboxKey = testKey();
  const published = { keys: [key.jwk, { ...sandboxKey.jwk, environment: 'sandbox' }] };

  it('refuses a determination signed with a key the JWKS marks sandbox, unless asked to accept it', () => {
    const test = signedRecord(tier1Payload(), sandboxKey);
    expect(invalidWith(verifyDetermination(test, published))).toEqual({
      valid: false,
      code: 'SANDBOX_KEY',
      reason: `key ${sandboxKey.kid} is a sandbox key: this is a sandbox organization's test determination, not a live one`,
    });
    expect(verifyDetermination(test, published, { acceptSandbox: true })).toEqual({
      valid: true,
      kid: sandboxKey.kid,
      sandbox: true,
    });
  });

  it('still verifies a live determination against the same JWKS, with or without acceptSandbox', () => {
    const live = signedRecord(tier1Payload(), key);
    expect(verifyDetermination(live, published)).toEqual({ valid: true, kid: key.kid, sandbox: false });
    expect(verifyDetermination(live, published, { acceptSandbox: true }).valid).toBe(true);
  });

  it('checks the signature of a sandbox determination like any other', () => {
    const test = signedRecord(tier1Payload(), sandboxKey);
    const forged = { ...test, signature: signedRecord(tier2Payload(), sandboxKey).signature };
    expect(invalidWith(verifyDetermination(forged, published, { acceptSandbox: true })).code).toBe(
      'BAD_SIGNATURE',
    );
  });
});

describe('verifyDetermination: a genuine record', () => {
  it('is valid, Tier 1 and Tier 2, and names the signing key', () => {
    expect(verifyDetermination(signedRecord(tier1Payload(), key), jwks)).toEqual({
      valid: true,
      kid: key.kid,
      sandbox: false,
    });
    expect(verifyDetermination(signedRecord(tier2Payload(), key), jwks)).toEqual({
      valid: true,
      kid: key.kid,
      sandbox: false,
    });
  });

  it('is valid as the whole { success, data } response', () => {
    const response = { success: true, data: signedRecord(tier1Payload(), key) };
    expect(verifyDetermination(response, jwks)).toEqual({ valid: true, kid: key.kid, sandbox: false });
  });

  it('is valid whatever the unsigned fields say (they are not covered by the signature)', () => {
    const record = {
      ...signedRecord(tier1Payload(), key),
      partnerSettlementStatus: 'OVERDUE',
      dueAt: null,
      verificationStatus: 'SOMETHING_ELSE',
      links: { anything: 'goes' },
    };
    expect(verifyDetermination(record, jwks).valid).toBe(true);
  });

  it('is valid with the JWKS holding other keys too (rotation), and with the JWKS in an envelope', () => {
    const record = signedRecord(tier1Payload(), key);
    const others = [testKey(), testKey()];
    expect(verifyDetermination(record, jwksOf(others[0] as never, key, others[1] as never)).valid).toBe(true);
    expect(verifyDetermination(record, { success: true, data: jwks }).valid).toBe(true);
  });

  it('does not depend on the member order of a displayed object (amountOwed)', () => {
    const record = signedRecord(tier1Payload(), key);
    const owed = record.amountOwed as Record<string, unknown>;
    record.amountOwed = Object.fromEntries(Object.entries(owed).reverse());
    expect(verifyDetermination(record, jwks).valid).toBe(true);
  });

  it('accepts the RFC 9864 and the older JOSE algorithm name on the key', () => {
    const record = signedRecord(tier1Payload(), key);
    expect(verifyDetermination(record, { keys: [{ ...key.jwk, alg: 'EdDSA' }] }).valid).toBe(true);
    const { alg: _alg, use: _use, ...bare } = key.jwk;
    expect(verifyDetermination(record, { keys: [bare] }).valid).toBe(true);
  });
});

describe('verifyDetermination: MALFORMED_RECORD and MALFORMED_JWKS', () => {
  const record = signedRecord(tier1Payload(), key);

  it.each([
    ['not an object', 'a string'],
    ['null', null],
    ['an array', [record]],
    ['without canonicalPayload', { ...record, canonicalPayload: undefined }],
    ['with a numeric signature', { ...record, signature: 12 }],
    ['without kid', { ...record, kid: '' }],
    [
      'with an uppercase canonicalHash',
      { ...record, canonicalHash: String(record.canonicalHash).toUpperCase() },
    ],
    ['an error response', { success: false, error: { code: 'NOT_FOUND', message: 'no such determination' } }],
  ])('rejects a record %s', (_name, bad) => {
    expect(invalidWith(verifyDetermination(bad, jwks)).code).toBe('MALFORMED_RECORD');
  });

  it('says what the error response was', () => {
    const result = verifyDetermination({ success: false, error: { code: 'NOT_FOUND' } }, jwks);
    expect(invalidWith(result).reason).toContain('NOT_FOUND');
  });

  it.each([
    ['not an object', 'jwks'],
    ['without keys', {}],
    ['with keys not an array', { keys: key.jwk }],
  ])('rejects a JWKS %s', (_name, bad) => {
    expect(invalidWith(verifyDetermination(record, bad)).code).toBe('MALFORMED_JWKS');
  });

  it.each([
    ['of another key type', { kty: 'EC', crv: 'P-256', x: key.x, y: key.x }],
    ['that carries a private key', { d: 'nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A' }],
    ['whose x is not 32 bytes', { x: key.x.slice(0, 40) }],
    ['whose x is not canonical base64url', { x: `${key.x}=` }],
    ['for encryption', { use: 'enc' }],
    ['for another algorithm', { alg: 'ES256' }],
  ])('rejects the selected JWKS key when it is one %s', (_name, change) => {
    const result = verifyDetermination(record, { keys: [{ ...key.jwk, ...change }] });
    expect(invalidWith(result).code).toBe('MALFORMED_JWKS');
  });
});

describe('verifyDetermination: the key', () => {
  it('UNKNOWN_KID: the JWKS has no key with the record kid, and the reason lists what it has', () => {
    const other = testKey();
    const result = invalidWith(verifyDetermination(signedRecord(tier1Payload(), key), jwksOf(other)));
    expect(result.code).toBe('UNKNOWN_KID');
    expect(result.reason).toContain(key.kid);
    expect(result.reason).toContain(other.kid);
  });

  it('KID_MISMATCH: a JWKS entry claiming the kid with another key is not trusted', () => {
    // Someone who can change the JWKS publishes their own key under our kid, and signs a
    // record of their own with it: the thumbprint gives them away.
    const impostor = testKey();
    const forged = signedRecord(tier1Payload(), { ...impostor, kid: key.kid });
    const result = invalidWith(verifyDetermination(forged, { keys: [{ ...impostor.jwk, kid: key.kid }] }));
    expect(result.code).toBe('KID_MISMATCH');
  });

  it('KID_MISMATCH: a genuine key listed under a wrong kid', () => {
    const record = signedRecord(tier1Payload(), { ...key, kid: 'not-its-thumbprint' });
    const result = verifyDetermination(record, { keys: [{ ...key.jwk, kid: 'not-its-thumbprint' }] });
    expect(invalidWith(result).code).toBe('KID_MISMATCH');
  });

  it('a key met before is still trusted only under its own thumbprint, and refused when its x changes', () => {
    // The verifier keeps what it derived from each key it met (its thumbprint and key object):
    // what it kept must never vouch for another key listed under the same kid.
    const record = signedRecord(tier1Payload(), key);
    expect(verifyDetermination(record, { keys: [key.jwk] })).toEqual({
      valid: true,
      kid: key.kid,
      sandbox: false,
    });
    const impostor = testKey();
    const forged = signedRecord(tier1Payload(), { ...impostor, kid: key.kid });
    expect(invalidWith(verifyDetermination(forged, { keys: [{ ...impostor.jwk, kid: key.kid }] })).code).toBe(
      'KID_MISMATCH',
    );
    expect(invalidWith(verifyDetermination(record, { keys: [{ ...key.jwk, x: impostor.jwk.x }] })).code).toBe(
      'KID_MISMATCH',
    );
    expect(verifyDetermination(record, { keys: [key.jwk] })).toEqual({
      valid: true,
      kid: key.kid,
      sandbox: false,
    });
  });

  it('picks the entry whose thumbprint matches when two entries share a kid', () => {
    const impostor = testKey();
    const record = signedRecord(tier1Payload(), key);
    const result = verifyDetermination(record, { keys: [{ ...impostor.jwk, kid: key.kid }, key.jwk] });
    expect(result).toEqual({ valid: true, kid: key.kid, sandbox: false });
  });
});

describe('verifyDetermination: the signed bytes', () => {
  it('HASH_MISMATCH: canonicalHash is not the SHA-256 of canonicalPayload', () => {
    const record = signedRecord(tier1Payload(), key);
    const result = verifyDetermination({ ...record, canonicalHash: 'b'.repeat(64) }, jwks);
    expect(invalidWith(result).code).toBe('HASH_MISMATCH');
  });

  it('HASH_MISMATCH: canonicalPayload edited, hash left', () => {
    const record = signedRecord(tier1Payload(), key);
    const edited = String(record.canonicalPayload).replace(
      '"damagePercentBp":3333',
      '"damagePercentBp":9999',
    );
    expect(edited).not.toBe(record.canonicalPayload);
    expect(invalidWith(verifyDetermination({ ...record, canonicalPayload: edited }, jwks)).code).toBe(
      'HASH_MISMATCH',
    );
  });

  it.each([
    ['pretty-printed', (p: unknown) => JSON.stringify(p, null, 2)],
    ['with members out of order', (p: unknown) => JSON.stringify(p)],
    ['with a trailing newline', (p: unknown) => `${canonicalize(p)}\n`],
    [
      'with an escaped character JCS writes as is',
      (p: unknown) => String(canonicalize(p)).replace('POL', '\\u0050OL'),
    ],
    ['not JSON at all', () => 'determination'],
  ])('NOT_CANONICAL: a payload signed %s', (_name, serialise) => {
    // Even correctly signed and hashed, text that is not its own JCS form is refused: a
    // partner re-canonicalising it would get other bytes.
    const payload = tier1Payload();
    const record = { ...payload, ...signText(serialise(payload), key) };
    expect(invalidWith(verifyDetermination(record, jwks)).code).toBe('NOT_CANONICAL');
  });

  it('NOT_CANONICAL: a payload with a lone surrogate (JCS requires well-formed Unicode)', () => {
    const payload = tier1Payload();
    const text = String(canonicalize(payload)).replace('POL-', 'POL-\\ud800');
    const record = { ...payload, policyNumber: 'POL-\ud800KE-2026-000417', ...signText(text, key) };
    const result = invalidWith(verifyDetermination(record, jwks));
    expect(result.code).toBe('NOT_CANONICAL');
    expect(result.reason).toContain('lone surrogate');
  });

  it('NOT_CANONICAL: a payload with a duplicate member', () => {
    const payload = tier1Payload();
    const text = String(canonicalize(payload)).replace('{', '{"amountOwed":null,');
    const record = { ...payload, ...signText(text, key) };
    expect(invalidWith(verifyDetermination(record, jwks)).code).toBe('NOT_CANONICAL');
  });

  it('BAD_SIGNATURE: each byte of the signature flipped', () => {
    const record = signedRecord(tier1Payload(), key);
    const signature = Buffer.from(String(record.signature), 'base64url');
    for (let i = 0; i < signature.length; i++) {
      const flipped = Buffer.from(signature);
      flipped[i] = (flipped[i] as number) ^ 0x01;
      const result = verifyDetermination({ ...record, signature: flipped.toString('base64url') }, jwks);
      expect(invalidWith(result).code).toBe('BAD_SIGNATURE');
    }
  });

  it.each([
    ['truncated', (s: string) => s.slice(0, -2)],
    ['padded', (s: string) => `${s}==`],
    ['in standard base64', (s: string) => Buffer.from(s, 'base64url').toString('base64')],
  ])('BAD_SIGNATURE: a signature %s', (_name, change) => {
    const record = signedRecord(tier1Payload(), key);
    const changed = change(String(record.signature));
    expect(changed).not.toBe(record.signature);
    expect(invalidWith(verifyDetermination({ ...record, signature: changed }, jwks)).code).toBe(
      'BAD_SIGNATURE',
    );
  });

  it('BAD_SIGNATURE: a signature string that is not the one encoding of its bytes', () => {
    // 64 bytes are 86 characters whose last 4 bits nobody reads: flipping one gives another
    // string for the same bytes. Only the canonical string is accepted.
    const record = signedRecord(tier1Payload(), key);
    const signature = String(record.signature);
    const last = BASE64URL.indexOf(signature.at(-1) ?? '');
    const changed = signature.slice(0, -1) + BASE64URL[last ^ 1];
    expect(Buffer.from(changed, 'base64url').equals(Buffer.from(signature, 'base64url'))).toBe(true);
    expect(invalidWith(verifyDetermination({ ...record, signature: changed }, jwks)).code).toBe(
      'BAD_SIGNATURE',
    );
  });

  it('BAD_SIGNATURE: another payload re-hashed but not re-signed', () => {
    const record = signedRecord(tier1Payload(), key);
    const other = signText(String(canonicalize({ ...tier1Payload(), damagePercentBp: 10000 })), key);
    const result = verifyDetermination(
      { ...record, canonicalPayload: other.canonicalPayload, canonicalHash: other.canonicalHash },
      jwks,
    );
    expect(invalidWith(result).code).toBe('BAD_SIGNATURE');
  });

  it('BAD_SIGNATURE: signed by another key than the kid names', () => {
    const record = signedRecord(tier1Payload(), testKey());
    const result = verifyDetermination({ ...record, kid: key.kid }, jwks);
    expect(invalidWith(result).code).toBe('BAD_SIGNATURE');
  });
});

describe('verifyDetermination: FIELD_MISMATCH', () => {
  it.each(SIGNED_FIELDS.filter((f) => f !== 'amountOwedUnavailableReason'))(
    'the record does not show the signed field %s',
    (field) => {
      const record = signedRecord(tier1Payload(), key);
      delete record[field];
      const result = invalidWith(verifyDetermination(record, jwks));
      expect(result.code).toBe('FIELD_MISMATCH');
      expect(result.reason).toContain(field);
    },
  );

  it('the record shows amountOwedUnavailableReason, which the Tier 1 payload does not have', () => {
    const record = {
      ...signedRecord(tier1Payload(), key),
      amountOwedUnavailableReason: 'SETTLED_BY_SERVICE',
    };
    const result = invalidWith(verifyDetermination(record, jwks));
    expect(result).toMatchObject({ code: 'FIELD_MISMATCH' });
    expect(result.reason).toContain('amountOwedUnavailableReason');
  });

  it('a Tier 2 record with its amountOwedUnavailableReason removed or changed', () => {
    const record = signedRecord(tier2Payload(), key);
    const { amountOwedUnavailableReason: _gone, ...without } = record;
    expect(invalidWith(verifyDetermination(without, jwks)).reason).toContain('amountOwedUnavailableReason');
    const changed = { ...record, amountOwedUnavailableReason: 'CURRENCY_EXPONENT_UNREGISTERED' };
    expect(invalidWith(verifyDetermination(changed, jwks)).reason).toContain('amountOwedUnavailableReason');
  });

  it.each([
    ['triggered shown as 1', 'triggered', 1],
    ['damagePercentBp shown as a string', 'damagePercentBp', '3333'],
    ['amountOwed shown as null', 'amountOwed', null],
  ])('a displayed value of another JSON type: %s', (_name, field, value) => {
    const record = { ...signedRecord(tier1Payload(), key), [field]: value };
    const result = invalidWith(verifyDetermination(record, jwks));
    expect(result.code).toBe('FIELD_MISMATCH');
    expect(result.reason).toContain(field);
  });

  it('a nested change: amountOwed.amount', () => {
    const record = signedRecord(tier1Payload(), key);
    record.amountOwed = { ...(record.amountOwed as object), amount: '41148.10' };
    const result = invalidWith(verifyDetermination(record, jwks));
    expect(result.code).toBe('FIELD_MISMATCH');
    expect(result.reason).toContain('amountOwed');
  });

  it('a signed payload with a field outside the signed set', () => {
    const payload = { ...tier1Payload(), payoutToAccount: '254700000000' };
    const result = invalidWith(verifyDetermination(signedRecord(payload, key), jwks));
    expect(result.code).toBe('FIELD_MISMATCH');
    expect(result.reason).toContain('payoutToAccount');
  });

  it('a signed payload that lacks a field (even if the record shows it)', () => {
    const payload = tier1Payload();
    const { evidenceHash, ...lacking } = payload;
    const record = { ...signedRecord(lacking, key), evidenceHash };
    const result = invalidWith(verifyDetermination(record, jwks));
    expect(result.code).toBe('FIELD_MISMATCH');
    expect(result.reason).toBe('the signed payload lacks evidenceHash');
  });

  it('a Tier 2 payload signed without its amountOwedUnavailableReason', () => {
    const { amountOwedUnavailableReason: _gone, ...payload } = tier2Payload();
    const result = invalidWith(verifyDetermination(signedRecord(payload, key), jwks));
    expect(result.code).toBe('FIELD_MISMATCH');
    expect(result.reason).toContain('amountOwedUnavailableReason');
  });

  it('a signed payload that is not an object', () => {
    const record = { ...tier1Payload(), ...signText('[1,2,3]', key) };
    expect(invalidWith(verifyDetermination(record, jwks)).code).toBe('FIELD_MISMATCH');
  });
});

describe('verifyEvidence', () => {
  const evidence = {
    indexName: 'cumulative rainfall deficit',
    indexValue: 0.4125,
    triggerThreshold: 0.3,
    exitThreshold: 0.6,
    inputDataHashes: [{ name: 'chirps-2026-10.tif', sha256: 'c'.repeat(64) }],
  };
  const hash = createHash('sha256')
    .update(canonicalize(evidence) as string)
    .digest('hex');

  it('accepts the evidence the signed evidenceHash covers, whatever its member order', () => {
    const record = signedRecord({ ...tier1Payload(), evidenceHash: hash }, key);
    const reordered = Object.fromEntries(Object.entries(evidence).reverse());
    expect(verifyEvidence(reordered, record)).toEqual({ valid: true, evidenceHash: hash });
    expect(verifyEvidence(evidence, { success: true, data: record })).toEqual({
      valid: true,
      evidenceHash: hash,
    });
  });

  it('rejects changed evidence, and goes by the signed hash, not the displayed one', () => {
    const record = signedRecord({ ...tier1Payload(), evidenceHash: hash }, key);
    expect(verifyEvidence({ ...evidence, indexValue: 0.4126 }, record)).toMatchObject({
      valid: false,
      code: 'EVIDENCE_MISMATCH',
    });
    const other = { ...evidence, indexValue: 0.1 };
    const otherHash = createHash('sha256')
      .update(canonicalize(other) as string)
      .digest('hex');
    expect(verifyEvidence(other, { ...record, evidenceHash: otherHash })).toMatchObject({
      code: 'EVIDENCE_MISMATCH',
    });
  });

  it('rejects evidence that is not JSON-representable, and a record without a signed payload', () => {
    const record = signedRecord({ ...tier1Payload(), evidenceHash: hash }, key);
    expect(verifyEvidence({ ...evidence, indexValue: Number.NaN }, record)).toMatchObject({
      code: 'MALFORMED_EVIDENCE',
    });
    expect(verifyEvidence([evidence], record)).toMatchObject({ code: 'MALFORMED_EVIDENCE' });
    expect(verifyEvidence(evidence, { evidenceHash: hash })).toMatchObject({ code: 'MALFORMED_RECORD' });
  });
});
