import { parseExposition, type Sample, sampleValue } from '@parametric/metrics';
import { eventually } from '@parametric/test-harness';
import {
  cropPurchase,
  type PolicyPlatform,
  type PolicyPlatformWithWebhooks,
  type SellableOrg,
  sellableOrg,
  startPolicyPlatform,
  startPolicyPlatformWithWebhooks,
} from './support';

// The domain metrics a Tier 1 activation moves, end to end (gateway, policy service on the local
// chain, webhooks service, a partner's receiver), and the chain breaker's when the chain fails.

async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  return parseExposition(await res.text());
}

const buy = async (p: PolicyPlatform, org: SellableOrg) => {
  const reply = await p.gateway.api('POST', '/policies/purchase', {
    key: org.apiKey,
    body: cropPurchase(org),
  });
  if (reply.status !== 201) throw new Error(`purchase failed: ${JSON.stringify(reply.body)}`);
  return reply.body.data.policy as { id: string };
};

describe('purchase, activate (Tier 1), policy.activated delivered', () => {
  let p: PolicyPlatformWithWebhooks;

  beforeAll(async () => {
    p = await startPolicyPlatformWithWebhooks();
  });
  afterAll(async () => {
    await p?.stop();
  });

  it('moves the activation duration, the relay lag and the delivery series, once', async () => {
    const org = await sellableOrg(p);
    await p.connectWebhook(org.apiKey);
    const policy = await buy(p, org);
    const policyBefore = await scrape(p.policy.url);
    const webhooksBefore = await scrape(p.webhooks.url);

    const activate = () => p.gateway.api('PUT', `/policies/${policy.id}/activate`, { key: org.apiKey });
    expect((await activate()).status).toBe(200);
    // An activation of an active policy changes nothing, and counts nothing.
    expect((await activate()).status).toBe(200);
    await p.receiver.waitFor(
      (d) =>
        d.verified &&
        d.event === 'policy.activated' &&
        (d.body as { data: { policyId: string } }).data.policyId === policy.id,
    );

    const policyAfter = await scrape(p.policy.url);
    expect(sampleValue(policyAfter, 'chain_activation_duration_seconds_count')).toBe(
      sampleValue(policyBefore, 'chain_activation_duration_seconds_count') + 1,
    );
    expect(sampleValue(policyAfter, 'chain_activation_duration_seconds_sum')).toBeGreaterThan(
      sampleValue(policyBefore, 'chain_activation_duration_seconds_sum'),
    );
    const policies = { collection: 'policies' };
    expect(sampleValue(policyAfter, 'outbox_relay_lag_seconds_count', policies)).toBeGreaterThan(
      sampleValue(policyBefore, 'outbox_relay_lag_seconds_count', policies),
    );
    expect(
      policyAfter.some((s) => s.name === 'outbox_pending_documents' && s.labels.collection === 'policies'),
    ).toBe(true);
    expect(sampleValue(policyAfter, 'circuit_breaker_state', { breaker: 'chain' })).toBe(0);

    // The row is recorded DELIVERED a moment after the receiver answered.
    await eventually(async () => {
      const webhooksAfter = await scrape(p.webhooks.url);
      const delivered = { outcome: 'delivered', attempt: '1' };
      expect(sampleValue(webhooksAfter, 'webhook_deliveries_total', delivered)).toBe(
        sampleValue(webhooksBefore, 'webhook_deliveries_total', delivered) + 1,
      );
      expect(sampleValue(webhooksAfter, 'webhook_delivery_latency_seconds_count')).toBe(
        sampleValue(webhooksBefore, 'webhook_delivery_latency_seconds_count') + 1,
      );
      for (const outcome of ['retrying', 'failed', 'skipped']) {
        expect(sampleValue(webhooksAfter, 'webhook_deliveries_total', { outcome, attempt: '1' })).toBe(
          sampleValue(webhooksBefore, 'webhook_deliveries_total', { outcome, attempt: '1' }),
        );
      }
    });
  });

  it('counts an event for an organization with no webhook URL as skipped', async () => {
    const org = await sellableOrg(p);
    const policy = await buy(p, org);
    const before = await scrape(p.webhooks.url);
    expect((await p.gateway.api('PUT', `/policies/${policy.id}/activate`, { key: org.apiKey })).status).toBe(
      200,
    );
    await eventually(async () => {
      const after = await scrape(p.webhooks.url);
      const skipped = { outcome: 'skipped', attempt: '1' };
      expect(sampleValue(after, 'webhook_deliveries_total', skipped)).toBeGreaterThan(
        sampleValue(before, 'webhook_deliveries_total', skipped),
      );
    });
  });
});

describe('the chain breaker', () => {
  let p: PolicyPlatform;

  beforeAll(async () => {
    // Nothing listens there: every chain call fails at once.
    p = await startPolicyPlatform({
      CHAIN_RPC_URL: 'http://127.0.0.1:9',
      CHAIN_BREAKER_RESET_MS: '1500',
      RUN_WORKERS: 'false',
    });
  });
  afterAll(async () => {
    await p?.stop();
  });

  it('goes to 2 (open) with a transition to="open" counted, then half-open after its reset time', async () => {
    const org = await sellableOrg(p);
    const before = await scrape(p.policy.url);
    expect(sampleValue(before, 'circuit_breaker_state', { breaker: 'chain' })).toBe(0);
    const open = { breaker: 'chain', to: 'open' };
    for (let i = 0; i < 4; i++) {
      const policy = await buy(p, org);
      const reply = await p.gateway.api('PUT', `/policies/${policy.id}/activate`, { key: org.apiKey });
      expect(reply.status).toBeGreaterThanOrEqual(500);
    }
    const opened = await scrape(p.policy.url);
    expect(sampleValue(opened, 'circuit_breaker_state', { breaker: 'chain' })).toBe(2);
    expect(sampleValue(opened, 'circuit_breaker_transitions_total', open)).toBe(
      sampleValue(before, 'circuit_breaker_transitions_total', open) + 1,
    );
    // No activation was committed: nothing observed.
    expect(sampleValue(opened, 'chain_activation_duration_seconds_count')).toBe(
      sampleValue(before, 'chain_activation_duration_seconds_count'),
    );
    await eventually(
      async () => {
        const later = await scrape(p.policy.url);
        expect(sampleValue(later, 'circuit_breaker_state', { breaker: 'chain' })).toBe(1);
        expect(
          sampleValue(later, 'circuit_breaker_transitions_total', { breaker: 'chain', to: 'half_open' }),
        ).toBe(1);
      },
      { timeout: 5000 },
    );
  });
});
