import { createHash, generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * Signs determinations the way the platform does, written out here with node:crypto and the
 * `canonicalize` package directly (not through the library under test), so that the verifier
 * is checked against an independent signer.
 */
export interface TestKey {
  privateKey: KeyObject;
  x: string;
  kid: string;
  jwk: { kty: 'OKP'; crv: 'Ed25519'; x: string; kid: string; use: 'sig'; alg: 'Ed25519' };
}

export function testKey(): TestKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x as string;
  // RFC 7638, written out: the required members in lexicographic order, no whitespace.
  const kid = createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
  return { privateKey, x, kid, jwk: { kty: 'OKP', crv: 'Ed25519', x, kid, use: 'sig', alg: 'Ed25519' } };
}

export function jwksOf(...keys: TestKey[]) {
  return { keys: keys.map((k) => k.jwk) };
}

export function tier1Payload(): Record<string, unknown> {
  return {
    determinationId: randomUUID(),
    policyId: randomUUID(),
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
    evidenceHash: 'a'.repeat(64),
  };
}

export function tier2Payload(): Record<string, unknown> {
  return {
    ...tier1Payload(),
    kind: 'LIVESTOCK_MORTALITY_INDEX',
    settlementMode: 'DETERMINATION_AND_SETTLEMENT',
    settledByMicrocrop: true,
    amountOwed: null,
    amountOwedUnavailableReason: 'SETTLED_BY_SERVICE',
  };
}

/** The signature part of a record over exactly `canonicalPayload`. */
export function signText(canonicalPayload: string, key: TestKey) {
  const bytes = Buffer.from(canonicalPayload, 'utf8');
  return {
    canonicalPayload,
    canonicalHash: createHash('sha256').update(bytes).digest('hex'),
    signature: sign(null, bytes, key.privateKey).toString('base64url'),
    kid: key.kid,
  };
}

/** A record as `GET /api/determinations/{id}` gives its `data`: signed fields, signature, unsigned fields. */
export function signedRecord(payload: Record<string, unknown>, key: TestKey): Record<string, unknown> {
  return {
    ...payload,
    ...signText(canonicalize(payload) as string, key),
    issuedAt: '2026-11-20T08:00:05.123Z',
    partnerSettlementStatus: 'PENDING',
    dueAt: '2026-12-20T08:00:05.123Z',
    verifiedByMicrocrop: false,
    verificationStatus: 'UNVERIFIED',
    links: { self: `/api/determinations/${payload.determinationId}` },
  };
}
