import { createLogger } from '@parametric/logger';
import { captureLogs, eventually } from '@parametric/test-harness';
import { parseTraceparent } from '@parametric/tracing';
import {
  cropPurchase,
  type PolicyPlatformWithWebhooks,
  sellableOrg,
  startPolicyPlatformWithWebhooks,
} from './support';

/**
 * The ops issue's test: one partner request followed across the gateway, the policy service,
 * the `events` queue and the webhooks service to the partner's receiver, by one trace id in
 * every service's log lines and in the delivery's `traceparent` header.
 */
describe('following one request across services', () => {
  const logs = { gateway: captureLogs(), policy: captureLogs(), webhooks: captureLogs() };
  let p: PolicyPlatformWithWebhooks;

  beforeAll(async () => {
    p = await startPolicyPlatformWithWebhooks(
      {},
      {
        gateway: createLogger({ name: 'gateway', level: 'info', destination: logs.gateway.destination }),
        policy: createLogger({ name: 'policy', level: 'info', destination: logs.policy.destination }),
        // Debug: a successful delivery's line ("webhook delivered") is a debug line.
        webhooks: createLogger({ name: 'webhooks', level: 'debug', destination: logs.webhooks.destination }),
      },
    );
  });
  afterAll(async () => {
    await p.stop();
  });

  const linesWith = (service: keyof typeof logs, traceId: string) =>
    logs[service].records().filter((r) => r.traceId === traceId);

  it('one trace id from the activation request to the delivered policy.activated', async () => {
    const org = await sellableOrg(p);
    await p.connectWebhook(org.apiKey);
    const purchase = await p.gateway.api('POST', '/policies/purchase', {
      key: org.apiKey,
      body: cropPurchase(org),
    });
    expect(purchase.status).toBe(201);
    const policyId = purchase.body.data.policy.id as string;

    // A request without a traceparent: the gateway starts a trace, and its lines carry it.
    const purchaseReqId = purchase.headers.get('x-request-id');
    const purchaseLine = logs.gateway
      .records()
      .find((r) => r.reqId === purchaseReqId && r.msg === 'request completed');
    expect(purchaseLine?.traceId).toMatch(/^[0-9a-f]{32}$/);

    // The partner continues its own trace into ours.
    const partnerTraceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const partnerSpanId = '00f067aa0ba902b7';
    const activation = await p.gateway.api('PUT', `/policies/${policyId}/activate`, {
      key: org.apiKey,
      body: { premiumReference: 'MPESA-RCPT-TRACE' },
      headers: { traceparent: `00-${partnerTraceId}-${partnerSpanId}-01` },
    });
    expect(activation.status).toBe(200);
    const reqId = activation.headers.get('x-request-id');
    expect(reqId).toBeTruthy();
    expect(purchaseLine?.traceId).not.toBe(partnerTraceId);

    const delivery = await p.receiver.waitFor(
      (d) =>
        d.event === 'policy.activated' &&
        (d.body as { data: { policyId: string } }).data.policyId === policyId,
    );
    // The delivery continues the activation's trace (our span as parent, not the partner's)…
    const sent = parseTraceparent(delivery.headers.traceparent);
    expect(sent?.traceId).toBe(partnerTraceId);
    expect(sent?.parentId).not.toBe(partnerSpanId);
    // …and what the partner receives is the event alone: no trace field in the body.
    expect(Object.keys(delivery.body as object).sort()).toEqual(['createdAt', 'data', 'event', 'id']);
    expect(delivery.rawBody).not.toContain(partnerTraceId);

    // Every service logged the activation under that one trace id, with the request id.
    const gatewayLine = linesWith('gateway', partnerTraceId).find((r) => r.msg === 'request completed');
    expect(gatewayLine).toMatchObject({ reqId, req: { method: 'PUT' } });
    const policyLine = linesWith('policy', partnerTraceId).find((r) => r.msg === 'request completed');
    expect(policyLine).toMatchObject({ reqId, req: { method: 'PUT' } });
    // Logged once the partner's answer is in, so possibly just after the receiver saw the POST.
    const webhooksLine = await eventually(
      () => {
        const line = linesWith('webhooks', partnerTraceId).find((r) => r.msg === 'webhook delivered');
        expect(line).toMatchObject({ reqId, event: 'policy.activated' });
        return line;
      },
      { message: "the webhooks service's line for the delivery" },
    );

    // A span of its own per hop: the partner's, the gateway's, the policy service's all differ.
    const spans = new Set([partnerSpanId, gatewayLine?.spanId, policyLine?.spanId, webhooksLine?.spanId]);
    expect(spans.size).toBe(4);
    // The purchase's trace is another trace: no line of it is in the activation's.
    expect(linesWith('gateway', partnerTraceId).every((r) => r.reqId === reqId)).toBe(true);
  });

  it('the gateway’s own calls to a service carry the request’s trace and request id', async () => {
    const org = await sellableOrg(p);
    await p.connectWebhook(org.apiKey);
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    // GET /organizations/me asks the webhooks service for the organization's webhook URL.
    const me = await p.gateway.api('GET', '/organizations/me', {
      key: org.apiKey,
      headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
    });
    expect(me.status).toBe(200);
    const reqId = me.headers.get('x-request-id');
    const lookup = linesWith('webhooks', traceId).find((r) => r.msg === 'request completed');
    expect(lookup).toMatchObject({ reqId, req: { method: 'GET', url: '/api/organizations/me/webhook' } });
  });
});
