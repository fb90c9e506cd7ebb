import { createHash, createPublicKey, randomUUID, verify } from 'node:crypto';
import { CanonicalizationError, SIGNED_FIELDS, verifyDetermination } from '@parametric/determination-verify';
import { formatMinor } from '@parametric/money';
import fc from 'fast-check';
import {
  canonicalDeterminationBytes,
  evidenceHash,
  generateSigningKeyPem,
  InvalidDeterminationPayloadError,
  loadSigningKeys,
  type SignedDeterminationPayload,
  type SigningKeys,
  signDetermination,
} from '../../../src/signing';

/** The example of docs/determinations.md; its hashes were checked with Python's json + hashlib. */
const EVIDENCE = {
  indexName: 'seasonal rainfall deficit',
  indexValue: 0.41,
  triggerThreshold: 0.25,
  exitThreshold: 0.73,
  dataSource: 'CHIRPS',
  dataSourceVersion: '2.0',
  periodStart: '2026-10-01T00:00:00Z',
  periodEnd: '2026-11-15T23:59:59Z',
  inputDataHashes: [
    {
      name: 'chirps-v2.0.2026.10-11.dekads.tif',
      sha256: '3b1f9e0c6d2a8f4e7b5c1a9d0e3f6b2c8a4d7e1f0b9c3a6d2e5f8b1c4a7d0e3f',
    },
  ],
  unitId: 'plot 0417-A',
  season: 'SRSD 2026',
};
const EVIDENCE_HASH = '630f1e668847835c134efc44a0057d0a9cea7568abdae46b971e77a620a15687';

const TIER1: SignedDeterminationPayload = {
  determinationId: '6f1c2f3e-8a4b-4c5d-9e7f-0a1b2c3d4e5f',
  policyId: '0b8e6c1a-2d3f-4a5b-8c7d-9e0f1a2b3c4d',
  policyNumber: 'POL-KE-2026-000417',
  kind: 'CROP_DAMAGE',
  methodologyVersion: 'chirps-rainfall-deficit/1.2.0',
  triggered: true,
  damagePercentBp: 3333,
  assessedAt: '2026-11-20T08:00:00.000Z',
  settlementMode: 'DETERMINATION',
  settledByMicrocrop: false,
  amountOwed: {
    amountMinor: '411481',
    amount: '4114.81',
    currency: 'KES',
    exponent: 2,
    damagePercentBp: 3333,
    basis: 'sumInsured × damagePercentBp / 10000, truncated to the minor unit',
  },
  evidenceHash: EVIDENCE_HASH,
};
const TIER1_CANONICAL =
  '{"amountOwed":{"amount":"4114.81","amountMinor":"411481","basis":"sumInsured × damagePercentBp / 10000, ' +
  'truncated to the minor unit","currency":"KES","damagePercentBp":3333,"exponent":2},' +
  '"assessedAt":"2026-11-20T08:00:00.000Z","damagePercentBp":3333,' +
  '"determinationId":"6f1c2f3e-8a4b-4c5d-9e7f-0a1b2c3d4e5f",' +
  `"evidenceHash":"${EVIDENCE_HASH}","kind":"CROP_DAMAGE","methodologyVersion":"chirps-rainfall-deficit/1.2.0",` +
  '"policyId":"0b8e6c1a-2d3f-4a5b-8c7d-9e0f1a2b3c4d","policyNumber":"POL-KE-2026-000417",' +
  '"settledByMicrocrop":false,"settlementMode":"DETERMINATION","triggered":true}';
const TIER1_HASH = '648bc1096f33646c77cc89022c1f93873eda04053d636ce83390611b34922574';

const TIER2: SignedDeterminationPayload = {
  ...TIER1,
  determinationId: '9d2e4f60-1b3c-4d5e-8f70-a1b2c3d4e5f6',
  kind: 'LIVESTOCK_MORTALITY_INDEX',
  settlementMode: 'DETERMINATION_AND_SETTLEMENT',
  settledByMicrocrop: true,
  amountOwed: null,
  amountOwedUnavailableReason: 'SETTLED_BY_SERVICE',
};

/** What `GET /api/determinations/{id}` gives as `data`, after the JSON round trip partners see. */
function record(payload: SignedDeterminationPayload, keys: SigningKeys): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify({
      ...payload,
      ...signDetermination(payload, keys),
      issuedAt: '2026-11-20T08:00:02.417Z',
      partnerSettlementStatus: 'PENDING',
      dueAt: '2026-12-20T08:00:02.417Z',
      verifiedByMicrocrop: false,
      verificationStatus: 'UNVERIFIED',
      links: { self: `/api/determinations/${payload.determinationId}` },
    }),
  );
}

function rejection(result: ReturnType<typeof verifyDetermination>) {
  if (result.valid) throw new Error('expected the record to be rejected');
  return result;
}

const keys = loadSigningKeys(generateSigningKeyPem());

describe('canonicalDeterminationBytes and evidenceHash', () => {
  it('are RFC 8785 canonical JSON and its SHA-256 (known answers)', () => {
    expect(Buffer.from(canonicalDeterminationBytes(TIER1)).toString('utf8')).toBe(TIER1_CANONICAL);
    expect(evidenceHash(EVIDENCE)).toBe(EVIDENCE_HASH);
    expect(evidenceHash(Object.fromEntries(Object.entries(EVIDENCE).reverse()))).toBe(EVIDENCE_HASH);
  });

  it('leave out an amountOwedUnavailableReason given as undefined rather than failing on it', () => {
    const bytes = canonicalDeterminationBytes({ ...TIER1, amountOwedUnavailableReason: undefined });
    expect(Buffer.from(bytes).toString('utf8')).toBe(TIER1_CANONICAL);
  });

  it.each([
    ['NaN', { indexValue: Number.NaN }, /\$\.indexValue.*not a finite number/],
    ['Infinity', { readings: [1, Number.NEGATIVE_INFINITY] }, /\$\.readings\[1\].*not a finite number/],
    ['a lone surrogate', { notes: 'rain\ud83d' }, /\$\.notes.*lone surrogate/],
    ['undefined', { season: undefined }, /\$\.season.*undefined/],
    ['a Date', { periodStart: new Date() }, /\$\.periodStart.*Date is not a plain JSON object/],
  ])('evidenceHash refuses evidence with %s, saying where', (_name, change, message) => {
    expect(() => evidenceHash({ ...EVIDENCE, ...change })).toThrow(CanonicalizationError);
    expect(() => evidenceHash({ ...EVIDENCE, ...change })).toThrow(message);
  });
});

describe('signDetermination', () => {
  it('gives the canonical payload, its SHA-256, an Ed25519 signature over it and the active kid', () => {
    const signed = signDetermination(TIER1, keys);
    expect(signed.canonicalPayload).toBe(TIER1_CANONICAL);
    expect(signed.canonicalHash).toBe(TIER1_HASH);
    expect(signed.kid).toBe(keys.activeKid);
    const publicKey = createPublicKey({ key: { ...keys.jwks.keys[0] }, format: 'jwk' });
    const bytes = Buffer.from(TIER1_CANONICAL, 'utf8');
    expect(verify(null, bytes, publicKey, Buffer.from(signed.signature, 'base64url'))).toBe(true);
  });

  it('round trip: Tier 1 and Tier 2 records verify with the published JWKS', () => {
    expect(verifyDetermination(record(TIER1, keys), keys.jwks)).toEqual({
      valid: true,
      kid: keys.activeKid,
      sandbox: false,
    });
    expect(verifyDetermination(record(TIER2, keys), keys.jwks)).toEqual({
      valid: true,
      kid: keys.activeKid,
      sandbox: false,
    });
    expect(verifyDetermination({ success: true, data: record(TIER2, keys) }, keys.jwks).valid).toBe(true);
  });

  const tampered: Record<(typeof SIGNED_FIELDS)[number], unknown> = {
    determinationId: randomUUID(),
    policyId: randomUUID(),
    policyNumber: 'POL-KE-2026-000418',
    kind: 'LIVESTOCK_MORTALITY_INDEX',
    methodologyVersion: 'chirps-rainfall-deficit/1.2.1',
    triggered: false,
    damagePercentBp: 10000,
    assessedAt: '2026-11-21T08:00:00.000Z',
    settlementMode: 'DETERMINATION_AND_SETTLEMENT',
    settledByMicrocrop: true,
    amountOwed: { ...TIER1.amountOwed, amountMinor: '1234567', amount: '12345.67' },
    amountOwedUnavailableReason: 'CURRENCY_EXPONENT_UNREGISTERED',
    evidenceHash: createHash('sha256').update('other evidence').digest('hex'),
  };

  it.each(SIGNED_FIELDS.map((field) => [field]))(
    'a record with %s tampered is FIELD_MISMATCH, naming it',
    (field) => {
      const result = rejection(
        verifyDetermination({ ...record(TIER1, keys), [field]: tampered[field] }, keys.jwks),
      );
      expect(result.code).toBe('FIELD_MISMATCH');
      expect(result.reason).toContain(field);
    },
  );

  it('a Tier 2 record with amountOwedUnavailableReason or amountOwed tampered is FIELD_MISMATCH', () => {
    const genuine = record(TIER2, keys);
    for (const [field, value] of [
      ['amountOwedUnavailableReason', 'CURRENCY_EXPONENT_UNREGISTERED'],
      ['amountOwed', TIER1.amountOwed],
    ] as const) {
      const result = rejection(verifyDetermination({ ...genuine, [field]: value }, keys.jwks));
      expect(result).toMatchObject({ code: 'FIELD_MISMATCH' });
      expect(result.reason).toContain(field);
    }
  });

  it('a tampered signature is BAD_SIGNATURE', () => {
    const genuine = record(TIER1, keys);
    const signature = Buffer.from(String(genuine.signature), 'base64url');
    signature[10] = (signature[10] as number) ^ 0x80;
    const result = verifyDetermination({ ...genuine, signature: signature.toString('base64url') }, keys.jwks);
    expect(rejection(result).code).toBe('BAD_SIGNATURE');
  });

  it('a record signed with a key the JWKS does not publish is UNKNOWN_KID', () => {
    const other = loadSigningKeys(generateSigningKeyPem());
    expect(rejection(verifyDetermination(record(TIER1, other), keys.jwks)).code).toBe('UNKNOWN_KID');
  });

  it('a JWKS entry carrying our kid with another key is KID_MISMATCH', () => {
    const other = loadSigningKeys(generateSigningKeyPem());
    const lying = { keys: [{ ...other.jwks.keys[0], kid: keys.activeKid }] };
    expect(rejection(verifyDetermination(record(TIER1, keys), lying)).code).toBe('KID_MISMATCH');
  });

  it('rotation: records signed by a retired key still verify; new ones carry the new kid', () => {
    const oldPem = generateSigningKeyPem();
    const before = loadSigningKeys(oldPem);
    const old = record(TIER1, before);

    const newPem = generateSigningKeyPem();
    const rotated = loadSigningKeys(`${newPem}\n${oldPem}`);
    expect(rotated.jwks.keys.map((k) => k.kid)).toEqual([rotated.activeKid, before.activeKid]);
    expect(verifyDetermination(old, rotated.jwks)).toEqual({
      valid: true,
      kid: before.activeKid,
      sandbox: false,
    });
    const fresh = record(TIER2, rotated);
    expect(fresh.kid).toBe(rotated.activeKid);
    expect(verifyDetermination(fresh, rotated.jwks)).toEqual({
      valid: true,
      kid: rotated.activeKid,
      sandbox: false,
    });

    // The retired key kept as its public half only, as a later rotation would leave it.
    const retiredPublic = createPublicKey(oldPem).export({ format: 'pem', type: 'spki' }) as string;
    const later = loadSigningKeys(`${generateSigningKeyPem()}${newPem}${retiredPublic}`);
    expect(verifyDetermination(old, later.jwks)).toEqual({
      valid: true,
      kid: before.activeKid,
      sandbox: false,
    });
    expect(verifyDetermination(fresh, later.jwks)).toEqual({
      valid: true,
      kid: rotated.activeKid,
      sandbox: false,
    });

    // Dropping the retired key from the JWKS is what would break old records.
    expect(rejection(verifyDetermination(old, loadSigningKeys(newPem).jwks)).code).toBe('UNKNOWN_KID');
  });

  it.each<[string, Partial<Record<keyof SignedDeterminationPayload, unknown>>, RegExp]>([
    ['damage above 10000 bp', { damagePercentBp: 10001, amountOwed: null }, /damagePercentBp/],
    ['NaN damage', { damagePercentBp: Number.NaN }, /damagePercentBp/],
    [
      'an Infinity exponent',
      { amountOwed: { ...TIER1.amountOwed, exponent: Number.POSITIVE_INFINITY } },
      /amountOwed\.exponent/,
    ],
    ['a determinationId that is not a uuid', { determinationId: 'det_1' }, /determinationId/],
    ['an unknown kind', { kind: 'FLOOD' }, /kind/],
    ['an assessedAt that is not ISO 8601', { assessedAt: '20 Nov 2026' }, /assessedAt/],
    [
      'a methodologyVersion not in NFC',
      { methodologyVersion: 'me\u0301thode/1' },
      /methodologyVersion: must be Unicode NFC/,
    ],
    [
      'an amount that is not amountMinor in major units',
      { amountOwed: { ...TIER1.amountOwed, amount: '4114.8' } },
      /amountOwed\.amount: must be 4114\.81/,
    ],
    [
      'an amountOwed with other damage',
      { amountOwed: { ...TIER1.amountOwed, damagePercentBp: 3000 } },
      /amountOwed\.damagePercentBp/,
    ],
    [
      'a negative amount',
      { amountOwed: { ...TIER1.amountOwed, amountMinor: '-1', amount: '-0.01' } },
      /amountOwed\.amountMinor/,
    ],
    ['a null amountOwed without a reason', { amountOwed: null }, /amountOwedUnavailableReason: is required/],
    ['an amountOwed with a reason', { amountOwedUnavailableReason: 'SETTLED_BY_SERVICE' }, /must be absent/],
    ['damage when not triggered', { triggered: false }, /damagePercentBp: must be 0 when not triggered/],
    ['Tier 2 not settled by the service', { ...TIER2, settledByMicrocrop: false }, /settledByMicrocrop/],
    [
      'Tier 2 with an amount',
      { ...TIER2, amountOwed: TIER1.amountOwed, amountOwedUnavailableReason: undefined },
      /SETTLED_BY_SERVICE/,
    ],
    ['a field outside the signed set', { payoutAccount: '254700000000' } as never, /payoutAccount/],
  ])('refuses to sign %s, saying why', (_name, change, message) => {
    const payload = { ...TIER1, ...change } as SignedDeterminationPayload;
    expect(() => signDetermination(payload, keys)).toThrow(InvalidDeterminationPayloadError);
    expect(() => signDetermination(payload, keys)).toThrow(message);
    expect(() => signDetermination(payload, keys)).toThrow(/^refusing to sign the determination: /);
  });

  it('refuses a lone surrogate with a CanonicalizationError naming the field', () => {
    const payload = { ...TIER1, policyNumber: 'POL-\udc00-1' };
    expect(() => signDetermination(payload, keys)).toThrow(CanonicalizationError);
    expect(() => signDetermination(payload, keys)).toThrow(/\$\.policyNumber.*lone surrogate/);
  });
});

describe('signDetermination, property-based', () => {
  const text = (max: number) =>
    fc
      .string({ unit: 'binary', minLength: 1, maxLength: max })
      .map((s) => s.normalize('NFC'))
      .filter((s) => s.length >= 1 && s.length <= max);

  const amountOwed = (damagePercentBp: number) =>
    fc
      .record({
        minor: fc.bigInt({ min: 0n, max: 10n ** 24n }),
        exponent: fc.integer({ min: 0, max: 18 }),
        currency: fc.stringMatching(/^[A-Z]{3}$/),
        basis: text(120),
      })
      .map(({ minor, exponent, currency, basis }) => ({
        amountMinor: minor.toString(),
        amount: formatMinor(minor, exponent),
        currency,
        exponent,
        damagePercentBp,
        basis,
      }));

  const payload: fc.Arbitrary<SignedDeterminationPayload> = fc
    .record({
      determinationId: fc.uuid({ version: 4 }),
      policyId: fc.uuid({ version: 4 }),
      policyNumber: text(60),
      kind: fc.constantFrom('CROP_DAMAGE' as const, 'LIVESTOCK_MORTALITY_INDEX' as const),
      methodologyVersion: text(60),
      triggered: fc.boolean(),
      damage: fc.integer({ min: 0, max: 10_000 }),
      assessedAt: fc
        .date({
          min: new Date('2000-01-01T00:00:00Z'),
          max: new Date('2100-01-01T00:00:00Z'),
          noInvalidDate: true,
        })
        .map((d) => d.toISOString()),
      tier2: fc.boolean(),
      unregisteredCurrency: fc.boolean(),
      evidence: fc.dictionary(text(20), fc.jsonValue({ stringUnit: 'binary', maxDepth: 3 }), { maxKeys: 8 }),
    })
    .chain(
      ({
        triggered,
        damage,
        tier2,
        unregisteredCurrency,
        evidence,
        ...rest
      }): fc.Arbitrary<SignedDeterminationPayload> => {
        const damagePercentBp = triggered ? damage : 0;
        const common = {
          ...rest,
          triggered,
          damagePercentBp,
          settlementMode: tier2 ? ('DETERMINATION_AND_SETTLEMENT' as const) : ('DETERMINATION' as const),
          settledByMicrocrop: tier2,
          evidenceHash: evidenceHash(evidence),
        };
        if (tier2) {
          return fc.constant({
            ...common,
            amountOwed: null,
            amountOwedUnavailableReason: 'SETTLED_BY_SERVICE',
          });
        }
        if (unregisteredCurrency) {
          return fc.constant({
            ...common,
            amountOwed: null,
            amountOwedUnavailableReason: 'CURRENCY_EXPONENT_UNREGISTERED',
          });
        }
        return amountOwed(damagePercentBp).map((owed) => ({ ...common, amountOwed: owed }));
      },
    );

  it('any valid payload signs, verifies after the JSON round trip and parses back to itself', () => {
    fc.assert(
      fc.property(payload, (p) => {
        const shown = record(p, keys);
        expect(verifyDetermination(shown, keys.jwks)).toEqual({
          valid: true,
          kid: keys.activeKid,
          sandbox: false,
        });
        expect(JSON.parse(String(shown.canonicalPayload))).toEqual(p);
      }),
      { numRuns: 150 },
    );
  });

  it('any flipped signature byte fails with BAD_SIGNATURE', () => {
    fc.assert(
      fc.property(
        payload,
        fc.integer({ min: 0, max: 63 }),
        fc.integer({ min: 1, max: 255 }),
        (p, index, mask) => {
          const shown = record(p, keys);
          const signature = Buffer.from(String(shown.signature), 'base64url');
          signature[index] = (signature[index] as number) ^ mask;
          const result = verifyDetermination(
            { ...shown, signature: signature.toString('base64url') },
            keys.jwks,
          );
          expect(result).toMatchObject({ valid: false, code: 'BAD_SIGNATURE' });
        },
      ),
      { numRuns: 150 },
    );
  });
});
