import { randomUUID } from 'node:crypto';
import { eventually } from '@parametric/test-harness';
import {
  activateAsPaid,
  assessment,
  type DeterminationsPlatform,
} from '../../services/determinations/test/support';
import { cropPurchase, herdBody, type SellableOrg, sellableOrg } from '../../services/policy/test/support';

/** One of every kind of resource a partner can own, with the ids the contract tests aim at. */
export interface OwnedResources extends SellableOrg {
  herdId: string;
  /** A PENDING crop policy. */
  policyId: string;
  policyNumber: string;
  /** An ACTIVE policy with a determination of its own. */
  activePolicyId: string;
  determinationId: string;
  deliveryId: string;
  /** A Tier 2 policy whose premium prompt stays pending. */
  pendingPolicyId: string;
  paymentId: string;
  quoteId: string;
  payoutId: string;
  /** A dashboard user, still invited (so a reissued invitation would change it). */
  userId: string;
}

/**
 * A sellable organization that owns one of everything, made through the gateway as a partner
 * (and ops) would: a herd, a pending and an active policy, a determination and its webhook rows,
 * then (Tier 2) a pending premium prompt, a quote, a completed payout and an invited user.
 * `webhook`: the organization's webhook URL is set first, so its deliveries are sent.
 */
export async function ownEveryResource(
  p: DeterminationsPlatform,
  options: { webhook: boolean },
): Promise<OwnedResources> {
  const org = await sellableOrg(p.asPolicyPlatform);
  const api = (method: string, path: string, body?: unknown) =>
    p.gateway.api(method, path, { key: org.apiKey, body });
  if (options.webhook) await p.connectWebhook(org.apiKey);
  const herd = (await api('POST', '/herds', herdBody(org.farmerId))).body.data;
  const policy = (await api('POST', '/policies/purchase', cropPurchase(org))).body.data.policy;
  const insured = (await api('POST', '/policies/purchase', cropPurchase(org))).body.data.policy;
  await api('PUT', `/policies/${insured.id}/activate`, {});
  const determination = (
    await p.gateway.ops('POST', '/determinations', { body: assessment({ policyId: insured.id }) })
  ).body.data.determination;
  // kyb.verified (the KYB decision), policy.activated and determination.delivered: their rows, all
  // written before the tests compare the log.
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
  // A payout: a Tier 2 policy, paid (activated as the payments service does), a triggered
  // determination on it, and the payout its payout-originations job makes (the farmer's number
  // is paid), completed and its payout.completed row written before the tests compare the log.
  const paidPolicy = (await api('POST', '/policies/purchase', cropPurchase(org))).body.data.policy;
  await activateAsPaid(p, org, paidPolicy.id);
  const owing = await p.gateway.ops('POST', '/determinations', {
    body: assessment({ policyId: paidPolicy.id }),
  });
  if (owing.status !== 201) throw new Error(`Tier 2 determination failed: ${JSON.stringify(owing.body)}`);
  const payoutId = await eventually(
    async () => {
      const log = (await api('GET', '/organizations/me/webhook/deliveries')).body.data;
      expect(log.deliveries.map((d: { event: string }) => d.event)).toContain('payout.completed');
      const payouts = (await api('GET', '/payouts')).body.data as { payoutId: string; status: string }[];
      expect(payouts.map((x) => x.status)).toEqual(['COMPLETED']);
      return payouts[0]?.payoutId as string;
    },
    { timeout: 20_000 },
  );
  const user = (
    await api('POST', '/organizations/me/users', {
      email: `viewer-${randomUUID()}@example.org`,
      name: 'Probe Viewer',
      role: 'ORG_VIEWER',
    })
  ).body.data.user;
  return {
    ...org,
    herdId: herd.id,
    policyId: policy.id,
    policyNumber: policy.policyNumber,
    activePolicyId: insured.id,
    determinationId: determination.determinationId,
    deliveryId: delivery.id,
    pendingPolicyId: tier2.id,
    paymentId: payment.transactionId,
    quoteId: quote.quoteId,
    payoutId,
    userId: user.id,
  };
}
