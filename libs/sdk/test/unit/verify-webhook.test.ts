/**
 * The SDK's webhook check against deliveries signed by the platform's own signer (the webhooks
 * service's `deliveryHeaders`), so the two cannot disagree. tools/webhook-receiver calls this
 * check, and its test/doc-example.test.ts holds the receiver docs/webhooks.md shows to it.
 */
import { randomUUID } from 'node:crypto';
import { deliveryHeaders } from '../../../../services/webhooks/src/delivery/sign';
import { verifyWebhook } from '../../src';

const SECRET = 'whsec_test_0123456789abcdef0123456789abcdef';
const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);

/** A delivery as the webhooks service sends it: its body and its headers. */
function delivery(options: { secret?: string; signedAt?: number; body?: string } = {}) {
  const id = randomUUID();
  const body =
    options.body ??
    JSON.stringify({
      id,
      event: 'policy.activated',
      createdAt: new Date(NOW).toISOString(),
      data: { policyId: randomUUID() },
    });
  const headers: Record<string, string> = deliveryHeaders({
    secret: options.secret ?? SECRET,
    body,
    event: 'policy.activated',
    deliveryId: id,
    now: options.signedAt ?? NOW,
  });
  return { id, body, headers };
}

describe('verifyWebhook', () => {
  it('accepts a delivery the platform signed, and returns its parsed body', () => {
    const { id, body, headers } = delivery();
    const result = verifyWebhook(Buffer.from(body), headers, SECRET, { now: NOW });
    expect(result).toEqual({
      ok: true,
      deliveryId: id,
      event: 'policy.activated',
      timestamp: Math.floor(NOW / 1000),
      body: JSON.parse(body),
    });
  });

  it('takes the body as a string or bytes and the headers as a fetch Headers too', () => {
    const { body, headers } = delivery();
    expect(verifyWebhook(body, new Headers(headers), SECRET, { now: NOW }).ok).toBe(true);
    expect(verifyWebhook(new TextEncoder().encode(body), headers, SECRET, { now: NOW }).ok).toBe(true);
  });

  it('refuses a tampered body, even one that parses to the same JSON', () => {
    const { body, headers } = delivery();
    const tampered = body.replace('policy.activated', 'policy.cancelled');
    expect(verifyWebhook(tampered, headers, SECRET, { now: NOW })).toEqual({
      ok: false,
      reason: 'bad-signature',
    });
    const reserialised = JSON.stringify(JSON.parse(body), null, 2);
    expect(verifyWebhook(reserialised, headers, SECRET, { now: NOW })).toEqual({
      ok: false,
      reason: 'bad-signature',
    });
  });

  it('refuses a delivery signed with another secret', () => {
    const { body, headers } = delivery({ secret: 'whsec_someone_else_0123456789abcdef' });
    expect(verifyWebhook(body, headers, SECRET, { now: NOW })).toEqual({
      ok: false,
      reason: 'bad-signature',
    });
  });

  it('refuses a stale timestamp outside the tolerance, either way, and accepts one inside', () => {
    const old = delivery({ signedAt: NOW - 301_000 });
    expect(verifyWebhook(old.body, old.headers, SECRET, { now: NOW })).toEqual({
      ok: false,
      reason: 'stale-timestamp',
    });
    const future = delivery({ signedAt: NOW + 301_000 });
    expect(verifyWebhook(future.body, future.headers, SECRET, { now: NOW }).ok).toBe(false);
    const recent = delivery({ signedAt: NOW - 299_000 });
    expect(verifyWebhook(recent.body, recent.headers, SECRET, { now: NOW }).ok).toBe(true);
    // A tighter tolerance is the caller's to choose.
    expect(verifyWebhook(recent.body, recent.headers, SECRET, { now: NOW, toleranceSeconds: 60 })).toEqual({
      ok: false,
      reason: 'stale-timestamp',
    });
  });

  it.each(['x-service-signature', 'x-service-timestamp', 'x-service-delivery'])(
    'refuses a delivery without %s',
    (name) => {
      const { body, headers } = delivery();
      delete headers[name];
      expect(verifyWebhook(body, headers, SECRET, { now: NOW })).toEqual({
        ok: false,
        reason: 'missing-headers',
      });
    },
  );

  it('refuses a signature of the wrong length without throwing', () => {
    const { body, headers } = delivery();
    headers['x-service-signature'] = 'deadbeef';
    expect(verifyWebhook(body, headers, SECRET, { now: NOW })).toEqual({
      ok: false,
      reason: 'bad-signature',
    });
  });

  it('refuses an empty secret loudly: it is a configuration mistake, not a bad delivery', () => {
    const { body, headers } = delivery();
    expect(() => verifyWebhook(body, headers, '', { now: NOW })).toThrow(TypeError);
  });

  it('refuses a signed body that is not an event, or whose id is not the delivery id', () => {
    const notJson = delivery({ body: 'not json' });
    expect(verifyWebhook(notJson.body, notJson.headers, SECRET, { now: NOW })).toEqual({
      ok: false,
      reason: 'bad-json',
    });
    const other = delivery({
      body: JSON.stringify({ id: randomUUID(), event: 'policy.activated', data: {} }),
    });
    expect(verifyWebhook(other.body, other.headers, SECRET, { now: NOW })).toEqual({
      ok: false,
      reason: 'id-mismatch',
    });
  });
});
