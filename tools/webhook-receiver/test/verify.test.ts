import { createHmac } from 'node:crypto';
import { signWebhook, verifyWebhook } from '../src';
import { SECRET, signedDelivery, signedText } from './helpers';

const NOW = Date.UTC(2025, 2, 14, 9, 26, 53, 589);

function verify(
  delivery: { rawBody: Buffer; headers: Record<string, string | string[] | undefined> },
  now = NOW,
) {
  return verifyWebhook({ rawBody: delivery.rawBody, headers: delivery.headers, secret: SECRET, now });
}

function without(headers: Record<string, string>, name: string) {
  const copy: Record<string, string> = { ...headers };
  delete copy[name];
  return copy;
}

describe('signWebhook', () => {
  it('is lowercase hex HMAC-SHA256 of "{timestamp}.{rawBody}" (vectors computed with openssl)', () => {
    expect(signWebhook('test-secret', 1700000000, '{"id":"evt_1","event":"kyb.verified"}')).toBe(
      'f52a509fb49a4d168b91d10e9a7d466c582b28eef7a3af1949f5d13e86ee3786',
    );
    // The secret is used as its UTF-8 bytes; strings and Buffers sign the same bytes.
    expect(signWebhook('sécret-ü', '1700000000', Buffer.from('{"id":"é"}', 'utf8'))).toBe(
      '78a5899d3ea41c5b5b53f937d78d98023f7dae203d0d9577b481021ce901a706',
    );
  });

  it('signs bytes, not text: a body that is not valid UTF-8 still verifies', () => {
    const rawBody = Buffer.concat([
      Buffer.from('{"id":"d1","event":"kyb.verified","note":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    const timestamp = String(Math.floor(NOW / 1000));
    const headers = {
      'x-service-delivery': 'd1',
      'x-service-timestamp': timestamp,
      'x-service-signature': signWebhook(SECRET, timestamp, rawBody),
    };
    expect(verify({ rawBody, headers })).toMatchObject({ ok: true, deliveryId: 'd1' });
    // Signing the decoded text instead (U+FFFD replacements) gives another signature.
    expect(signWebhook(SECRET, timestamp, rawBody.toString('utf8'))).not.toBe(headers['x-service-signature']);
  });
});

describe('verifyWebhook', () => {
  it('accepts a correctly signed delivery and returns its id, event, timestamp and body', () => {
    const delivery = signedDelivery({ now: NOW, event: 'policy.activated', data: { policyId: 'pol_9' } });
    expect(verify(delivery)).toEqual({
      ok: true,
      deliveryId: delivery.id,
      event: 'policy.activated',
      timestamp: Math.floor(NOW / 1000),
      body: {
        id: delivery.id,
        event: 'policy.activated',
        createdAt: new Date(NOW).toISOString(),
        data: { policyId: 'pol_9' },
      },
    });
  });

  it('accepts a delivery signed exactly 300 s ago or 300 s ahead (the window is inclusive)', () => {
    expect(verify(signedDelivery({ now: NOW - 300_000 }))).toMatchObject({ ok: true });
    expect(verify(signedDelivery({ now: NOW + 300_000 }))).toMatchObject({ ok: true });
  });

  it('finds headers whatever the case of their names, and accepts a one-element array', () => {
    const delivery = signedDelivery({ now: NOW });
    const headers = {
      'X-Service-Delivery': [delivery.headers['x-service-delivery'] as string],
      'X-SERVICE-TIMESTAMP': delivery.headers['x-service-timestamp'],
      'x-Service-Signature': delivery.headers['x-service-signature'],
    };
    expect(verify({ rawBody: delivery.rawBody, headers })).toMatchObject({
      ok: true,
      deliveryId: delivery.id,
    });
  });

  it('rejects a body changed by one byte', () => {
    const delivery = signedDelivery({ now: NOW, data: { amountUSDC: '12.50' } });
    const tampered = Buffer.from(delivery.rawBody);
    const at = tampered.indexOf('12.50') + 1;
    tampered[at] = '3'.charCodeAt(0); // 12.50 -> 13.50
    expect(tampered.toString()).toContain('13.50');
    expect(verify({ ...delivery, rawBody: tampered })).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('rejects the same JSON serialised again with different whitespace (the signature is over raw bytes)', () => {
    const delivery = signedDelivery({ now: NOW, serialise: (body) => JSON.stringify(body, null, 2) });
    expect(verify(delivery)).toMatchObject({ ok: true });
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(delivery.rawBody.toString('utf8'))));
    expect(reserialised.equals(delivery.rawBody)).toBe(false);
    expect(verify({ ...delivery, rawBody: reserialised })).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('rejects a delivery signed with another secret', () => {
    const delivery = signedDelivery({ now: NOW, secret: `${SECRET}x` });
    expect(verify(delivery)).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it.each([
    ['one character short', (sig: string) => sig.slice(0, -1)],
    ['one character long', (sig: string) => `${sig}0`],
    ['the raw 32 bytes instead of hex', (sig: string) => Buffer.from(sig, 'hex').toString('latin1')],
    ['non-hex characters of the right length', (sig: string) => `zz${sig.slice(2)}`],
    ['uppercase hex', (sig: string) => sig.toUpperCase()],
    ['prefixed with sha256=', (sig: string) => `sha256=${sig}`],
  ])('rejects a signature %s', (_name, mangle) => {
    const delivery = signedDelivery({ now: NOW });
    const signature = mangle(delivery.headers['x-service-signature'] as string);
    expect(signature).not.toBe(delivery.headers['x-service-signature']);
    const headers = { ...delivery.headers, 'x-service-signature': signature };
    expect(verify({ ...delivery, headers })).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('rejects a correctly signed delivery 301 s old', () => {
    expect(verify(signedDelivery({ now: NOW - 301_000 }))).toEqual({ ok: false, reason: 'stale-timestamp' });
  });

  it('rejects a correctly signed delivery 301 s in the future', () => {
    expect(verify(signedDelivery({ now: NOW + 301_000 }))).toEqual({ ok: false, reason: 'stale-timestamp' });
  });

  it('honours toleranceSeconds', () => {
    const delivery = signedDelivery({ now: NOW - 61_000 });
    const options = { rawBody: delivery.rawBody, headers: delivery.headers, secret: SECRET, now: NOW };
    expect(verifyWebhook({ ...options, toleranceSeconds: 60 })).toEqual({
      ok: false,
      reason: 'stale-timestamp',
    });
    expect(verifyWebhook({ ...options, toleranceSeconds: 61 })).toMatchObject({ ok: true });
  });

  it.each(['abc', '1741944413.5', '-1741944413', '1.741944413e9', ' 1741944413', '0x67d3f65d'])(
    'rejects the non-numeric timestamp %j even when it is what was signed',
    (timestamp) => {
      const delivery = signedDelivery({ now: NOW });
      const headers = {
        ...delivery.headers,
        'x-service-timestamp': timestamp,
        'x-service-signature': signWebhook(SECRET, timestamp, delivery.rawBody),
      };
      expect(verify({ ...delivery, headers })).toEqual({ ok: false, reason: 'bad-timestamp' });
    },
  );

  it.each(['x-service-delivery', 'x-service-timestamp', 'x-service-signature'])(
    'rejects a delivery without %s',
    (name) => {
      const delivery = signedDelivery({ now: NOW });
      expect(verify({ ...delivery, headers: without(delivery.headers, name) })).toEqual({
        ok: false,
        reason: 'missing-headers',
      });
      expect(verify({ ...delivery, headers: { ...delivery.headers, [name]: '' } })).toEqual({
        ok: false,
        reason: 'missing-headers',
      });
    },
  );

  it('treats a signature header sent twice as missing', () => {
    const delivery = signedDelivery({ now: NOW });
    const signature = delivery.headers['x-service-signature'] as string;
    const headers = { ...delivery.headers, 'x-service-signature': [signature, signature] };
    expect(verify({ ...delivery, headers })).toEqual({ ok: false, reason: 'missing-headers' });
  });

  it('rejects a delivery whose x-service-delivery is not body.id (the header is not signed)', () => {
    const delivery = signedDelivery({ now: NOW });
    const headers = { ...delivery.headers, 'x-service-delivery': 'another-id' };
    expect(verify({ ...delivery, headers })).toEqual({ ok: false, reason: 'id-mismatch' });
  });

  it.each([
    ['not JSON', 'not json'],
    ['a JSON array', '[1,2]'],
    ['JSON null', 'null'],
    ['an object without an event', '{"id":"d1"}'],
  ])('rejects a correctly signed body that is %s', (_name, text) => {
    expect(verify(signedText(text, NOW))).toEqual({ ok: false, reason: 'bad-json' });
  });

  it('takes the event from the signed body, not from the unsigned header', () => {
    const delivery = signedDelivery({ now: NOW, event: 'payout.failed' });
    const headers = { ...delivery.headers, 'x-service-event': 'payout.completed' };
    expect(verify({ ...delivery, headers })).toMatchObject({ ok: true, event: 'payout.failed' });
  });

  it('refuses to verify with an empty secret (anyone could sign)', () => {
    const delivery = signedDelivery({ now: NOW, secret: '' });
    expect(() => verifyWebhook({ ...delivery, secret: '', now: NOW })).toThrow(/secret is empty/);
  });

  it('agrees with a plain HMAC of the same bytes', () => {
    const delivery = signedDelivery({ now: NOW });
    const timestamp = delivery.headers['x-service-timestamp'] as string;
    const expected = createHmac('sha256', SECRET)
      .update(`${timestamp}.${delivery.rawBody.toString('utf8')}`)
      .digest('hex');
    expect(delivery.headers['x-service-signature']).toBe(expected);
  });
});
