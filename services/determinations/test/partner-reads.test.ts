import { createHash } from 'node:crypto';
import { verifyDetermination } from '@parametric/determination-verify';
import { signContext } from '@parametric/http';
import canonicalize from 'canonicalize';
import {
  type ActivePolicy,
  activeCropPolicy,
  assessment,
  type DeterminationsPlatform,
  SIGNING_SECRET,
  startDeterminationsPlatform,
} from './support';

let p: DeterminationsPlatform;
let policy: ActivePolicy;
let other: ActivePolicy;
const ids: string[] = [];

beforeAll(async () => {
  p = await startDeterminationsPlatform();
  policy = await activeCropPolicy(p, { sumInsured: 80_000 });
  other = await activeCropPolicy(p, { org: policy.org, sumInsured: 20_000 });
  for (const [target, overrides] of [
    [policy, { damagePercentBp: 1_000 }],
    [policy, { triggered: false, damagePercentBp: 0 }],
    [other, { damagePercentBp: 5_000 }],
  ] as const) {
    const reply = await p.gateway.ops('POST', '/determinations', {
      body: assessment({ policyId: target.policyId }, overrides),
    });
    ids.push(reply.body.data.determination.determinationId);
  }
}, 120_000);

afterAll(async () => {
  await p?.stop();
});

const get = (path: string, key = policy.org.apiKey) => p.gateway.api('GET', path, { key });

describe('GET /determinations', () => {
  it('lists the organization’s determinations newest first, paginated', async () => {
    const all = await get('/determinations');
    expect(all.status).toBe(200);
    expect(all.body.data.map((d: { determinationId: string }) => d.determinationId)).toEqual(
      [...ids].reverse(),
    );
    expect(all.body.pagination).toEqual({ page: 1, limit: 20, total: 3, totalPages: 1 });
    const second = await get('/determinations?limit=1&page=2');
    expect(second.body.data.map((d: { determinationId: string }) => d.determinationId)).toEqual([ids[1]]);
    expect(second.body.pagination).toEqual({ page: 2, limit: 1, total: 3, totalPages: 3 });
    // A list item carries the determination's fields and the settlement status, not the signature.
    expect(all.body.data[0]).toMatchObject({
      links: { self: `/determinations/${ids[2]}` },
      partnerSettlementStatus: 'PENDING',
    });
    expect(all.body.data[0].signature).toBeUndefined();
  });

  it('filters by policy, by triggered and by settlement status', async () => {
    const byPolicy = await get(`/determinations?policyId=${other.policyId}`);
    expect(byPolicy.body.data.map((d: { determinationId: string }) => d.determinationId)).toEqual([ids[2]]);
    const untriggered = await get('/determinations?triggered=false');
    expect(untriggered.body.data.map((d: { determinationId: string }) => d.determinationId)).toEqual([
      ids[1],
    ]);
    const pending = await get('/determinations?partnerSettlementStatus=PENDING');
    expect(pending.body.pagination.total).toBe(2);
    const bad = await get('/determinations?triggered=yes&partnerSettlementStatus=LATE');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'partnerSettlementStatus',
      'triggered',
    ]);
  });

  it('shows another organization nothing of them: an empty list, and 404 like an unknown id', async () => {
    const stranger = await p.gateway.register();
    const list = await get('/determinations', stranger.apiKey);
    expect(list.body.data).toEqual([]);
    for (const suffix of ['', '/evidence', '/settlement-report']) {
      const theirs = await get(`/determinations/${ids[0]}${suffix}`, stranger.apiKey);
      const unknown = await get(
        `/determinations/00000000-0000-4000-8000-000000000000${suffix}`,
        stranger.apiKey,
      );
      expect([theirs.status, unknown.status]).toEqual([404, 404]);
      expect(theirs.body).toEqual(unknown.body);
    }
  });
});

describe('GET /determinations/{id} and its evidence', () => {
  it('returns every field of the determination, the signature and the exact signed bytes', async () => {
    const read = await get(`/determinations/${ids[0]}`);
    const d = read.body.data;
    expect(d).toMatchObject({
      determinationId: ids[0],
      policyId: policy.policyId,
      policyNumber: policy.policyNumber,
      amountOwed: {
        amountMinor: '800000',
        amount: '8000.00',
        currency: 'KES',
        exponent: 2,
        damagePercentBp: 1_000,
      },
      signatureAlgorithm: 'Ed25519',
      links: {
        self: `/determinations/${ids[0]}`,
        evidence: `/determinations/${ids[0]}/evidence`,
        settlementReport: `/determinations/${ids[0]}/settlement-report`,
      },
    });
    const signed = JSON.parse(d.canonicalPayload);
    expect(canonicalize(signed)).toBe(d.canonicalPayload);
    expect(createHash('sha256').update(d.canonicalPayload).digest('hex')).toBe(d.canonicalHash);
    // What is signed is exactly what the record shows.
    for (const [field, value] of Object.entries(signed)) expect(d[field]).toEqual(value);
    expect(Object.keys(signed).sort()).toEqual(
      [
        'amountOwed',
        'assessedAt',
        'damagePercentBp',
        'determinationId',
        'evidenceHash',
        'kind',
        'methodologyVersion',
        'policyId',
        'policyNumber',
        'settledByMicrocrop',
        'settlementMode',
        'triggered',
      ].sort(),
    );
  });

  it('serves the evidence whose hash the determination signs', async () => {
    const read = (await get(`/determinations/${ids[0]}`)).body.data;
    const evidence = await get(`/determinations/${ids[0]}/evidence`);
    expect(evidence.status).toBe(200);
    expect(evidence.body.data).toMatchObject({
      determinationId: ids[0],
      evidenceHash: read.evidenceHash,
      evidence: {
        indexName: 'CHIRPS cumulative rainfall deficit',
        dataSource: 'CHIRPS',
        triggerThreshold: 60,
      },
    });
    const recomputed = createHash('sha256')
      .update(canonicalize(evidence.body.data.evidence) as string)
      .digest('hex');
    expect(recomputed).toBe(read.evidenceHash);
  });
});

describe('GET /.well-known/jwks.json', () => {
  it('publishes the signing key without an API key, cacheable, and it verifies every determination', async () => {
    const jwks = await p.gateway.api('GET', '/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    expect(jwks.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    expect(jwks.headers.get('cache-control')).toBe('public, max-age=300');
    // The live key, then the sandbox key that signs sandbox organizations' test determinations,
    // marked so live verifiers refuse what it signs (made at start outside production).
    const key = {
      kty: 'OKP',
      crv: 'Ed25519',
      x: expect.any(String),
      kid: expect.any(String),
      use: 'sig',
      alg: 'Ed25519',
    };
    expect(jwks.body.keys).toEqual([key, { ...key, environment: 'sandbox' }]);
    for (const id of ids) {
      const d = (await get(`/determinations/${id}`)).body.data;
      expect(d.kid).toBe(jwks.body.keys[0].kid);
      expect(verifyDetermination(d, jwks.body)).toEqual({ valid: true, kid: d.kid, sandbox: false });
    }
  });

  it('rejects a record whose displayed damage was changed after signing', async () => {
    const jwks = (await p.gateway.api('GET', '/.well-known/jwks.json')).body;
    const d = (await get(`/determinations/${ids[0]}`)).body.data;
    const tampered = { ...d, damagePercentBp: 9_000 };
    expect(verifyDetermination(tampered, jwks)).toMatchObject({ valid: false, code: 'FIELD_MISMATCH' });
  });
});

describe('the service’s own capability check (behind the gateway’s)', () => {
  /** A request signed as the gateway would sign it, for a caller with `role`. */
  const direct = (path: string, role: string) =>
    fetch(`${p.determinations.url}/api${path}`, {
      headers: signContext(
        { organizationId: policy.org.id, role, requestId: 'direct-1', issuedAt: Date.now() },
        SIGNING_SECRET,
      ),
    });

  it.each([
    `/determinations`,
    `/determinations/{id}`,
    `/determinations/{id}/evidence`,
    `/determinations/{id}/settlement-report`,
  ])('%s refuses a role without determination:read even if the gateway let it through', async (template) => {
    const path = template.replace('{id}', ids[0] as string);
    const viewer = await direct(path, 'ORG_VIEWER');
    expect(viewer.status).toBe(403);
    expect(((await viewer.json()) as { error: { message: string } }).error.message).toBe(
      'Your role ORG_VIEWER lacks the capability determination:read this endpoint needs',
    );
    expect((await direct(path, 'ORG_FINANCE')).status).toBe(200);
  });
});
