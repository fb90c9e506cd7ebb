import { randomUUID } from 'node:crypto';
import { PARTNER_ROUTES } from '@parametric/contracts';
import type { RouteContract } from '@parametric/http';
import { eventually } from '@parametric/test-harness';
import {
  assessment,
  type DeterminationsPlatform,
  startDeterminationsPlatform,
} from '../../services/determinations/test/support';
import { startPaymentsStack } from '../../services/payments/test/support';
import { cropPurchase, herdBody, type SellableOrg, sellableOrg } from '../../services/policy/test/support';
import { BODY_REFERENCES, ID_PROBES, type IdProbe, type Ids, unknownIds } from './id-probes';

/**
 * Every partner route that takes another resource's id, called by organization B with
 * organization A's ids: each must answer 404 NOT_FOUND with a body identical to the answer for
 * an id that does not exist at all, and change nothing of A's.
 */

interface Owned extends SellableOrg {
  herdId: string;
  policyId: string;
  deliveryId: string;
  determinationId: string;
  paymentId: string;
  quoteId: string;
  payoutId: string;
  userId: string;
}

const partnerRoutes = Object.values(PARTNER_ROUTES).flat() as RouteContract[];

let p: DeterminationsPlatform;
let a: Owned;
let b: Owned;

async function own(): Promise<Owned> {
  const org = await sellableOrg(p.asPolicyPlatform);
  const api = (method: string, path: string, body?: unknown) =>
    p.gateway.api(method, path, { key: org.apiKey, body });
  const herd = (await api('POST', '/herds', herdBody(org.farmerId))).body.data;
  const policy = (await api('POST', '/policies/purchase', cropPurchase(org))).body.data.policy;
  // A second policy, active, with a determination of its own.
  const insured = (await api('POST', '/policies/purchase', cropPurchase(org))).body.data.policy;
  await api('PUT', `/policies/${insured.id}/activate`, {});
  const determination = (
    await p.gateway.ops('POST', '/determinations', { body: assessment({ policyId: insured.id }) })
  ).body.data.determination;
  // kyb.verified (the KYB decision), policy.activated and determination.delivered: their rows, all
  // written before the probes compare the log.
  const delivery = await eventually(async () => {
    const log = (await api('GET', '/organizations/me/webhook/deliveries')).body.data;
    expect(log.deliveries.map((d: { event: string }) => d.event).sort()).toEqual([
      'determination.delivered',
      'kyb.verified',
      'policy.activated',
    ]);
    return log.deliveries[0];
  });
  // Tier 2 from here on: a premium prompt that stays pending (the simulator never calls back
  // for this number), and a quote.
  await p.gateway.ops('POST', `/organizations/${org.id}/service-tier`, {
    body: { serviceTier: 'DETERMINATION_AND_SETTLEMENT' },
  });
  const tier2 = (await api('POST', '/policies/purchase', cropPurchase(org))).body.data.policy;
  const payment = (
    await api('POST', '/payments/initiate', {
      reference: tier2.id,
      amount: tier2.premium,
      phoneNumber: '+254711000090',
    })
  ).body.data;
  const quote = (
    await api('POST', '/payments/quote', { amount: 1000, fromCurrency: 'KES', toCurrency: 'USDC' })
  ).body.data;
  // A payout for the Tier 2 policy, originated as ops would (the farmer's number is paid).
  const payout = await p.gateway.ops('POST', '/payouts', {
    body: {
      determinationId: randomUUID(),
      policyId: tier2.id,
      organizationId: org.id,
      amountMinor: '500000',
      currency: 'KES',
      exponent: 2,
    },
  });
  if (payout.status !== 201) throw new Error(`payout origination failed: ${JSON.stringify(payout.body)}`);
  // Paid, and its payout.completed row written, before the probes compare the log.
  await eventually(
    async () => {
      const log = (await api('GET', '/organizations/me/webhook/deliveries')).body.data;
      expect(log.deliveries.map((d: { event: string }) => d.event)).toContain('payout.completed');
    },
    { timeout: 20_000 },
  );
  // A dashboard user, still invited (so a reissued invitation would change it).
  const user = (
    await api('POST', '/organizations/me/users', {
      email: `viewer-${randomUUID()}@example.org`,
      name: 'Probe Viewer',
      role: 'ORG_VIEWER',
    })
  ).body.data.user;
  return {
    ...org,
    userId: user.id,
    herdId: herd.id,
    policyId: policy.id,
    deliveryId: delivery.id,
    determinationId: determination.determinationId,
    paymentId: payment.transactionId,
    quoteId: quote.quoteId,
    payoutId: payout.body.data.payoutId,
  };
}

beforeAll(async () => {
  p = await startDeterminationsPlatform({}, {}, async ({ policyUrl, redisPrefix }) => {
    const payments = await startPaymentsStack({ policyUrl, redisPrefix });
    return {
      gatewayEnv: { PAYMENTS_URL: payments.payments.url, PAYMENTS_INITIATE_LIMIT_POINTS: '1000' },
      stop: () => payments.stop(),
    };
  });
  [a, b] = await Promise.all([own(), own()]);
  // B has a webhook URL, so a retry cannot fail on "no URL" before the ownership check.
  await p.connectWebhook(b.apiKey);
}, 60_000);

afterAll(async () => {
  await p.stop();
});

it('has a probe for every partner route that takes an id, and for every route whose body names one', () => {
  const withIds = partnerRoutes.filter((r) => r.params).map((r) => r.operationId);
  expect(withIds.length).toBeGreaterThan(0);
  expect(Object.keys(ID_PROBES).sort()).toEqual([...withIds, ...BODY_REFERENCES].sort());
});

it.each(Object.keys(ID_PROBES))(
  "%s with another organization's id answers exactly as for an unknown id, and changes nothing",
  async (operationId) => {
    const route = partnerRoutes.find((r) => r.operationId === operationId) as RouteContract;
    const probe = ID_PROBES[operationId] as IdProbe;
    const unknown = unknownIds();
    const aPolicy = () => p.gateway.api('GET', `/policies/${a.policyId}`, { key: a.apiKey });
    const aDeliveries = () => p.gateway.api('GET', '/organizations/me/webhook/deliveries', { key: a.apiKey });
    const aReports = () =>
      p.gateway.api('GET', `/determinations/${a.determinationId}/settlement-report`, { key: a.apiKey });
    const aUser = () => p.gateway.api('GET', `/organizations/me/users/${a.userId}`, { key: a.apiKey });
    const [before, deliveriesBefore, reportsBefore, userBefore] = [
      await aPolicy(),
      await aDeliveries(),
      await aReports(),
      await aUser(),
    ];
    const call = (ids: Ids) => {
      const { path, body } = probe(ids, b.farmerId);
      return p.gateway.api(route.method.toUpperCase(), path, { key: b.apiKey, body });
    };
    const foreign = await call(a);
    const missing = await call(unknown);
    expect([foreign.status, foreign.body.error?.code]).toEqual([404, 'NOT_FOUND']);
    expect(foreign.body).toEqual(missing.body);

    expect((await aPolicy()).body).toEqual(before.body);
    expect((await aDeliveries()).body).toEqual(deliveriesBefore.body);
    expect((await aReports()).body).toEqual(reportsBefore.body);
    expect((await aUser()).body).toEqual(userBefore.body);
    const plots = await p.gateway.api('GET', `/farmers/${a.farmerId}/plots`, { key: a.apiKey });
    const herds = await p.gateway.api('GET', `/farmers/${a.farmerId}/herds`, { key: a.apiKey });
    expect([plots.body.data.length, herds.body.data.length]).toEqual([1, 1]);
  },
);
