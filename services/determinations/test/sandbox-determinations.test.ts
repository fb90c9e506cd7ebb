import { randomUUID } from 'node:crypto';
import { verifyDetermination } from '@parametric/determination-verify';
import { eventually } from '@parametric/test-harness';
import { cropPurchase, farmerBody, plotBody } from '../../policy/test/support';
import {
  activeCropPolicy,
  assessment,
  type DeterminationsPlatform,
  startDeterminationsPlatform,
} from './support';

/**
 * Issue 27: a sandbox organization issues test determinations for its own policies through the
 * gateway, and they follow the production path (signed, stored, `determination.delivered`,
 * settlement reports, `determination.settlement_report_overdue`), signed with a sandbox key that live verifiers
 * refuse. A live organization has no such door.
 */
let p: DeterminationsPlatform;

beforeAll(async () => {
  // The overdue sweep every second, so a short `dueInSeconds` shows `determination.settlement_report_overdue`.
  p = await startDeterminationsPlatform({ DETERMINATION_OVERDUE_SWEEP_SECONDS: '1' });
}, 120_000);
afterAll(async () => {
  await p?.stop();
});

/** A sandbox organization with one ACTIVE crop policy: no ops step anywhere (docs/api.md, "Sandbox"). */
async function sandboxPolicy() {
  const org = await p.gateway.register({ environment: 'sandbox' });
  const key = org.apiKey;
  const farmer = await p.gateway.api('POST', '/farmers', { key, body: farmerBody() });
  const plot = await p.gateway.api('POST', '/plots', { key, body: plotBody(farmer.body.data.id) });
  const bought = await p.gateway.api('POST', '/policies/purchase', {
    key,
    body: cropPurchase({ farmerId: farmer.body.data.id, plotId: plot.body.data.id }, { sumInsured: 20_000 }),
  });
  if (bought.status !== 201) throw new Error(`sandbox purchase: ${JSON.stringify(bought.body)}`);
  const policyId = bought.body.data.policy.id as string;
  const activated = await p.gateway.api('PUT', `/policies/${policyId}/activate`, { key });
  if (activated.status !== 200) throw new Error(`sandbox activation: ${JSON.stringify(activated.body)}`);
  return { org, key, policyId };
}

describe('POST /sandbox/determinations', () => {
  it('issues a signed test determination, delivered as a real one, that only a sandbox-aware verifier accepts', async () => {
    const { key, policyId } = await sandboxPolicy();
    await p.connectWebhook(key);
    const issued = await p.gateway.api('POST', '/sandbox/determinations', {
      key,
      body: { policyId, triggered: true, damagePercentBp: 4_000 },
    });
    expect(issued.status).toBe(201);
    const determination = issued.body.data;
    expect(determination).toMatchObject({
      policyId,
      kind: 'CROP_DAMAGE',
      triggered: true,
      damagePercentBp: 4_000,
      amountOwed: { amount: '8000.00', currency: 'KES' },
      partnerSettlementStatus: 'PENDING',
    });

    const jwks = (await p.gateway.api('GET', '/.well-known/jwks.json')).body;
    const read = (await p.gateway.api('GET', `/determinations/${determination.determinationId}`, { key }))
      .body.data;
    expect(verifyDetermination(read, jwks)).toMatchObject({ valid: false, code: 'SANDBOX_KEY' });
    expect(verifyDetermination(read, jwks, { acceptSandbox: true })).toEqual({
      valid: true,
      kid: read.kid,
      sandbox: true,
    });
    const evidence = (
      await p.gateway.api('GET', `/determinations/${determination.determinationId}/evidence`, { key })
    ).body.data.evidence;
    expect(evidence.dataSource).toBe('sandbox');

    const delivered = await p.receiver.waitFor(
      (d) =>
        d.event === 'determination.delivered' &&
        (d.body as { data: { determinationId: string } }).data.determinationId ===
          determination.determinationId,
      20_000,
    );
    expect((delivered.body as { data: { amountOwed: { amount: string } } }).data.amountOwed.amount).toBe(
      '8000.00',
    );

    const report = await p.gateway.api(
      'POST',
      `/determinations/${determination.determinationId}/settlement-report`,
      {
        key,
        body: {
          partnerReference: `SANDBOX-${randomUUID()}`,
          outcome: 'SETTLED_FULL',
          method: 'MOBILE_MONEY',
          settledAmountMinor: '800000',
          settlementCurrency: 'KES',
          settledAt: new Date().toISOString(),
        },
      },
    );
    expect(report.status).toBe(201);
    // Reported like a live determination's: the read shows it settled by the partner.
    const reported = (await p.gateway.api('GET', `/determinations/${determination.determinationId}`, { key }))
      .body.data;
    expect(reported.partnerSettlementStatus).toBe('REPORTED');
  });

  it('lets a short dueInSeconds make the report overdue, with determination.settlement_report_overdue', async () => {
    const { key, policyId } = await sandboxPolicy();
    await p.connectWebhook(key);
    const issued = await p.gateway.api('POST', '/sandbox/determinations', {
      key,
      body: { policyId, triggered: true, damagePercentBp: 2_500, dueInSeconds: 1 },
    });
    const id = issued.body.data.determinationId as string;
    await eventually(
      async () => {
        const read = (await p.gateway.api('GET', `/determinations/${id}`, { key })).body.data;
        expect(read.partnerSettlementStatus).toBe('OVERDUE');
      },
      { timeout: 20_000, message: 'the test determination to fall overdue' },
    );
    await p.receiver.waitFor(
      (d) => d.event === 'determination.settlement_report_overdue' && JSON.stringify(d.body).includes(id),
      20_000,
    );
  });

  it('is 404 for a live organization, for another organization’s policy and an unknown one; 400 for a policy not in force', async () => {
    const live = await p.gateway.register();
    const { policyId } = await sandboxPolicy();
    const other = await sandboxPolicy();
    const body = { policyId, triggered: true, damagePercentBp: 1_000 };
    const asLive = await p.gateway.api('POST', '/sandbox/determinations', { key: live.apiKey, body });
    const foreign = await p.gateway.api('POST', '/sandbox/determinations', { key: other.key, body });
    const livePolicy = await activeCropPolicy(p);
    const ofLive = await p.gateway.api('POST', '/sandbox/determinations', {
      key: other.key,
      body: { ...body, policyId: livePolicy.policyId },
    });
    const unknown = await p.gateway.api('POST', '/sandbox/determinations', {
      key: other.key,
      body: { ...body, policyId: randomUUID() },
    });
    const wrongKind = await p.gateway.api('POST', '/sandbox/determinations', {
      key: other.key,
      body: {
        policyId: other.policyId,
        triggered: true,
        damagePercentBp: 1_000,
        kind: 'LIVESTOCK_MORTALITY_INDEX',
      },
    });
    const untriggered = await p.gateway.api('POST', '/sandbox/determinations', {
      key: other.key,
      body: { policyId: other.policyId, triggered: false, damagePercentBp: 1_000 },
    });
    expect(
      [asLive, foreign, ofLive, unknown, wrongKind, untriggered].map((r) => [r.status, r.body.error?.code]),
    ).toEqual([
      [404, 'NOT_FOUND'],
      [404, 'NOT_FOUND'],
      [404, 'NOT_FOUND'],
      [404, 'NOT_FOUND'],
      [400, 'INVALID_INPUT'],
      [400, 'INVALID_INPUT'],
    ]);
    // Nothing was issued for any of them.
    const listed = await p.gateway.api('GET', `/determinations?policyId=${policyId}`, { key: live.apiKey });
    expect(listed.body.data).toEqual([]);
    const ofLivePolicy = await p.gateway.api('GET', `/determinations?policyId=${livePolicy.policyId}`, {
      key: livePolicy.org.apiKey,
    });
    expect(ofLivePolicy.body.data).toEqual([]);
  });
});

describe('the ops doors sign a sandbox organization’s policy with the sandbox keys', () => {
  it('signs sandbox with the single door and the batch door, live still live, as the policy records its environment', async () => {
    const sandbox = await sandboxPolicy();
    const live = await activeCropPolicy(p);
    const jwks = (await p.gateway.api('GET', '/.well-known/jwks.json')).body;
    const sandboxKids = new Set(
      jwks.keys
        .filter((k: { environment?: string }) => k.environment === 'sandbox')
        .map((k: { kid: string }) => k.kid),
    );

    const policies = await Promise.all(
      [sandbox.policyId, live.policyId].map(
        async (id) => (await p.gateway.ops('GET', `/policies/${id}`)).body.data,
      ),
    );
    expect(policies.map((policy) => policy.environment)).toEqual(['sandbox', 'live']);

    const single = await p.gateway.ops('POST', '/determinations', {
      body: assessment({ policyId: sandbox.policyId }),
    });
    const batch = await p.gateway.ops('POST', '/determinations/batch', {
      body: { items: [assessment({ policyId: live.policyId }), assessment({ policyId: sandbox.policyId })] },
    });
    expect([single.status, batch.status, batch.body.data.summary]).toEqual([
      201,
      200,
      { created: 2, replayed: 0, failed: 0 },
    ]);
    const ids = [
      [sandbox, single.body.data.determination.determinationId],
      [live, batch.body.data.results[0].determination.determinationId],
      [sandbox, batch.body.data.results[1].determination.determinationId],
    ] as const;
    const verdicts = [];
    for (const [owner, id] of ids) {
      const key = 'key' in owner ? owner.key : owner.org.apiKey;
      const read = (await p.gateway.api('GET', `/determinations/${id}`, { key })).body.data;
      verdicts.push([
        sandboxKids.has(read.kid),
        verifyDetermination(read, jwks).valid,
        verifyDetermination(read, jwks, { acceptSandbox: true }).valid,
      ]);
    }
    expect(verdicts).toEqual([
      [true, false, true],
      [false, true, true],
      [true, false, true],
    ]);
  });
});
