import { MAX_BODY_BYTES, type ReceivedDelivery, startWebhookReceiver, type WebhookReceiver } from '../src';
import { post, request, SECRET, signedDelivery } from './helpers';

describe('startWebhookReceiver', () => {
  let receiver: WebhookReceiver;

  beforeEach(async () => {
    receiver = await startWebhookReceiver({ secret: SECRET });
  });

  afterEach(async () => {
    await receiver.close();
  });

  it('listens on a free loopback port and gives a /hooks URL', () => {
    expect(receiver.port).toBeGreaterThan(0);
    expect(receiver.url).toBe(`http://127.0.0.1:${receiver.port}/hooks`);
  });

  it('records and verifies a signed delivery, and answers 200', async () => {
    const delivery = signedDelivery({
      event: 'kyb.verified',
      data: { organizationId: 'org_1', kybStatus: 'VERIFIED' },
    });
    const answer = await post(receiver.url, delivery);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ received: true, duplicate: false });
    expect(receiver.received).toHaveLength(1);
    const [entry] = receiver.received as [ReceivedDelivery];
    expect(entry).toMatchObject({
      path: '/hooks',
      rawBody: delivery.rawBody.toString('utf8'),
      body: JSON.parse(delivery.rawBody.toString('utf8')),
      deliveryId: delivery.id,
      event: 'kyb.verified',
      verified: true,
      duplicate: false,
      responseStatus: 200,
    });
    expect(entry.reason).toBeUndefined();
    expect(entry.headers['x-service-signature']).toBe(delivery.headers['x-service-signature']);
    expect(new Date(entry.receivedAt).toISOString()).toBe(entry.receivedAt);
    expect(receiver.verified()).toEqual([entry]);
  });

  it('accepts POSTs on any path and keeps the path', async () => {
    const base = receiver.url.replace(/\/hooks$/, '');
    await post(`${base}/partner/a?attempt=1`, signedDelivery());
    await post(`${base}/`, signedDelivery());
    expect(receiver.received.map((d) => d.path)).toEqual(['/partner/a?attempt=1', '/']);
    expect(receiver.received.every((d) => d.verified)).toBe(true);
  });

  it('records a badly signed delivery as unverified with its reason, and answers 401', async () => {
    const tampered = signedDelivery({ secret: 'another-secret' });
    const stale = signedDelivery({ now: Date.now() - 3_600_000 });
    expect((await post(receiver.url, tampered)).status).toBe(401);
    expect((await post(receiver.url, stale)).status).toBe(401);
    expect(receiver.received.map((d) => [d.verified, d.reason, d.deliveryId])).toEqual([
      [false, 'bad-signature', tampered.id],
      [false, 'stale-timestamp', stale.id],
    ]);
    expect(receiver.received[0]?.body).toMatchObject({ id: tampered.id });
    expect(receiver.verified()).toEqual([]);
  });

  it('without a secret records every delivery unverified (no-secret); setSecret fixes that', async () => {
    await receiver.close();
    receiver = await startWebhookReceiver();
    expect((await post(receiver.url, signedDelivery())).status).toBe(401);
    expect(receiver.received[0]).toMatchObject({ verified: false, reason: 'no-secret' });
    receiver.setSecret(SECRET);
    expect((await post(receiver.url, signedDelivery())).status).toBe(200);
    expect(receiver.received[1]).toMatchObject({ verified: true });
  });

  it('marks a second verified copy of a delivery id as a duplicate and still answers 200', async () => {
    const id = 'a5b0c6a2-4d1e-4f43-9b5e-0d8f5a7e1c11';
    const first = signedDelivery({ id });
    // A retry: same body.id, signed again with a later timestamp.
    const retry = signedDelivery({ id, now: Date.now() + 30_000 });
    const answers = [
      await post(receiver.url, first),
      await post(receiver.url, retry),
      await post(receiver.url, first),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(JSON.parse(answers[1]?.body ?? '')).toEqual({ received: true, duplicate: true });
    expect(receiver.received.map((d) => d.duplicate)).toEqual([false, true, true]);
    expect(receiver.verified()).toHaveLength(1);
    expect(receiver.verified()[0]).toBe(receiver.received[0]);
  });

  it('does not let an unverified copy take a delivery id', async () => {
    const id = 'c1d2e3f4-0000-4000-8000-000000000001';
    await post(receiver.url, signedDelivery({ id, secret: 'forged' }));
    await post(receiver.url, signedDelivery({ id }));
    expect(receiver.received.map((d) => [d.verified, d.duplicate])).toEqual([
      [false, false],
      [true, false],
    ]);
    expect(receiver.verified()).toEqual([receiver.received[1]]);
  });

  it('answers 413 to a body over 1 MiB and records it unverified', async () => {
    const delivery = signedDelivery({ data: { padding: 'x'.repeat(MAX_BODY_BYTES) } });
    expect(delivery.rawBody.length).toBeGreaterThan(MAX_BODY_BYTES);
    const answer = await post(receiver.url, delivery);
    expect(answer.status).toBe(413);
    expect(receiver.received[0]).toMatchObject({
      verified: false,
      reason: 'body-too-large',
      deliveryId: delivery.id,
      rawBody: '',
      body: null,
    });
  });

  it('accepts a body of exactly 1 MiB', async () => {
    const empty = signedDelivery({ id: 'd-1mib', data: { padding: '' } }).rawBody.length;
    const delivery = signedDelivery({ id: 'd-1mib', data: { padding: 'x'.repeat(MAX_BODY_BYTES - empty) } });
    expect(delivery.rawBody.length).toBe(MAX_BODY_BYTES);
    expect((await post(receiver.url, delivery)).status).toBe(200);
    expect(receiver.received[0]?.verified).toBe(true);
  });

  describe('setBehaviour', () => {
    it('answers the status and body it returns, and passes it the recorded delivery', async () => {
      const seen: ReceivedDelivery[] = [];
      receiver.setBehaviour((d) => {
        seen.push(d);
        return { status: 503, body: 'down for maintenance' };
      });
      const delivery = signedDelivery();
      const answer = await post(receiver.url, delivery);
      expect(answer).toMatchObject({ status: 503, body: 'down for maintenance' });
      expect(answer.headers['content-type']).toMatch(/^text\/plain/);
      expect(seen).toEqual([receiver.received[0]]);
      expect(receiver.received[0]).toMatchObject({ verified: true, responseStatus: 503 });
    });

    it('can fail the first attempt and accept the retry', async () => {
      receiver.setBehaviour((d) => (d.duplicate ? undefined : { status: 500 }));
      const id = 'e0e0e0e0-1111-4222-8333-444444444444';
      expect((await post(receiver.url, signedDelivery({ id }))).status).toBe(500);
      expect((await post(receiver.url, signedDelivery({ id }))).status).toBe(200);
      expect(receiver.received.map((d) => d.responseStatus)).toEqual([500, 200]);
    });

    it('undefined restores the default answers', async () => {
      receiver.setBehaviour(() => ({ status: 418 }));
      expect((await post(receiver.url, signedDelivery())).status).toBe(418);
      receiver.setBehaviour(undefined);
      expect((await post(receiver.url, signedDelivery())).status).toBe(200);
      expect((await post(receiver.url, signedDelivery({ secret: 'wrong' }))).status).toBe(401);
    });

    it('answers 500 with the message when the behaviour throws', async () => {
      receiver.setBehaviour(() => {
        throw new Error('boom');
      });
      const answer = await post(receiver.url, signedDelivery());
      expect(answer).toMatchObject({ status: 500, body: 'behaviour threw: boom' });
    });

    it('is taken from the respond option at start', async () => {
      await receiver.close();
      receiver = await startWebhookReceiver({ secret: SECRET, respond: () => ({ status: 202 }) });
      expect((await post(receiver.url, signedDelivery())).status).toBe(202);
    });

    it('delayMs: the delivery is recorded at once and answered after the delay', async () => {
      receiver.setBehaviour(() => ({ delayMs: 300, status: 204 }));
      const delivery = signedDelivery();
      const answered = post(receiver.url, delivery);
      const recorded = await receiver.waitFor((d) => d.deliveryId === delivery.id);
      // Recorded, not answered yet: the answer waits on a timer that cannot have fired.
      expect(recorded.responseStatus).toBeNull();
      expect((await answered).status).toBe(204);
      expect(recorded.responseStatus).toBe(204);
    });

    it('hang: the request gets no answer, and close() still ends it', async () => {
      receiver.setBehaviour(() => ({ hang: true }));
      const delivery = signedDelivery();
      const answered = post(receiver.url, delivery);
      const recorded = await receiver.waitFor((d) => d.deliveryId === delivery.id);
      await receiver.close();
      await expect(answered).rejects.toThrow(/socket hang up|ECONNRESET/);
      expect(recorded.responseStatus).toBeNull();
    });

    it('close() also ends a delayed answer without waiting for its timer', async () => {
      receiver.setBehaviour(() => ({ delayMs: 60 * 60 * 1000 }));
      const delivery = signedDelivery();
      const answered = post(receiver.url, delivery);
      await receiver.waitFor((d) => d.deliveryId === delivery.id);
      await receiver.close();
      await expect(answered).rejects.toThrow(/socket hang up|ECONNRESET/);
    });
  });

  describe('waitFor / waitForCount', () => {
    it('waitFor resolves with a delivery already recorded', async () => {
      const delivery = signedDelivery({ event: 'payout.failed' });
      await post(receiver.url, delivery);
      await expect(receiver.waitFor((d) => d.event === 'payout.failed')).resolves.toBe(receiver.received[0]);
    });

    it('waitFor resolves when a matching delivery arrives later, ignoring others', async () => {
      const waiting = receiver.waitFor((d) => d.event === 'kyb.rejected' && d.verified);
      await post(receiver.url, signedDelivery({ event: 'kyb.verified' }));
      await post(receiver.url, signedDelivery({ event: 'kyb.rejected', secret: 'wrong' }));
      const wanted = signedDelivery({ event: 'kyb.rejected' });
      await post(receiver.url, wanted);
      const found = await waiting;
      expect(found.deliveryId).toBe(wanted.id);
      expect(found).toBe(receiver.received[2]);
    });

    it('waitFor rejects with a message naming what did arrive when nothing matches in time', async () => {
      const other = signedDelivery({ event: 'policy.activated' });
      await post(receiver.url, other);
      await expect(receiver.waitFor((d) => d.event === 'payout.completed', 50)).rejects.toThrow(
        `waitFor: nothing matched within 50 ms (1 received; latest: policy.activated ${other.id} verified)`,
      );
    });

    it('waitForCount resolves with all matching deliveries once there are n', async () => {
      const waiting = receiver.waitForCount(2, (d) => d.verified);
      await post(receiver.url, signedDelivery({ secret: 'wrong' }));
      await post(receiver.url, signedDelivery());
      await post(receiver.url, signedDelivery());
      const found = await waiting;
      expect(found).toHaveLength(2);
      expect(found.every((d) => d.verified)).toBe(true);
    });

    it('waitForCount counts every delivery by default, and times out with its count in the message', async () => {
      await post(receiver.url, signedDelivery({ secret: 'wrong' }));
      await expect(receiver.waitForCount(1)).resolves.toHaveLength(1);
      await expect(receiver.waitForCount(3, undefined, 50)).rejects.toThrow(
        /waitForCount\(3\): nothing matched within 50 ms/,
      );
    });

    it('close() rejects pending waits, and later waits fail at once', async () => {
      const waiting = receiver.waitFor(() => false, 60_000);
      await receiver.close();
      await expect(waiting).rejects.toThrow('the webhook receiver was closed');
      await expect(receiver.waitFor(() => false)).rejects.toThrow('the receiver is closed');
    });
  });

  it('onDelivery tells each delivery as it is recorded until unsubscribed', async () => {
    const told: string[] = [];
    const stop = receiver.onDelivery((d) => told.push(d.deliveryId ?? '-'));
    const a = signedDelivery();
    await post(receiver.url, a);
    stop();
    await post(receiver.url, signedDelivery());
    expect(told).toEqual([a.id]);
  });

  describe('inspection API', () => {
    const base = () => receiver.url.replace(/\/hooks$/, '');

    it('GET /_received lists deliveries most recent first, without rawBody', async () => {
      const first = signedDelivery({ event: 'policy.activated' });
      const second = signedDelivery({ event: 'payout.completed', secret: 'wrong' });
      await post(receiver.url, first);
      await post(receiver.url, second);
      const answer = await request(`${base()}/_received`, { method: 'GET' });
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('application/json');
      const { deliveries } = JSON.parse(answer.body) as { deliveries: Record<string, unknown>[] };
      expect(deliveries.map((d) => [d.deliveryId, d.verified, d.reason])).toEqual([
        [second.id, false, 'bad-signature'],
        [first.id, true, undefined],
      ]);
      expect(deliveries[1]).toMatchObject({ path: '/hooks', event: 'policy.activated', duplicate: false });
      expect(deliveries[1]?.body).toMatchObject({ id: first.id });
      for (const d of deliveries) expect(d).not.toHaveProperty('rawBody');
      // The recorded entries themselves keep rawBody.
      expect(receiver.received[0]?.rawBody).toBe(first.rawBody.toString('utf8'));
    });

    it('PUT /_secret sets the secret used for the next deliveries', async () => {
      await receiver.close();
      receiver = await startWebhookReceiver();
      const changes: boolean[] = [];
      receiver.onSecretChange((set) => changes.push(set));
      expect((await post(receiver.url, signedDelivery({ secret: 'pasted-secret' }))).status).toBe(401);
      const put = await request(`${base()}/_secret`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ secret: 'pasted-secret' }),
      });
      expect(put.status).toBe(200);
      expect(put.body).not.toContain('pasted-secret');
      expect((await post(receiver.url, signedDelivery({ secret: 'pasted-secret' }))).status).toBe(200);
      expect(receiver.received.map((d) => d.verified)).toEqual([false, true]);
      expect(changes).toEqual([true]);
    });

    it('PUT /_secret with a path verifies deliveries to that path with its own secret (two organizations, one receiver)', async () => {
      // The default secret (SECRET) stays for every other path.
      const put = await request(`${base()}/_secret`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ secret: 'org-b-secret', path: '/hooks/org-b' }),
      });
      expect(put.status).toBe(200);
      expect(put.body).not.toContain('org-b-secret');
      expect((await post(`${base()}/hooks/org-b`, signedDelivery({ secret: 'org-b-secret' }))).status).toBe(
        200,
      );
      expect(
        (await post(`${base()}/hooks/org-b?x=1`, signedDelivery({ secret: 'org-b-secret' }))).status,
      ).toBe(200);
      expect((await post(`${base()}/hooks/org-b`, signedDelivery())).status).toBe(401);
      expect((await post(receiver.url, signedDelivery())).status).toBe(200);
      expect((await post(receiver.url, signedDelivery({ secret: 'org-b-secret' }))).status).toBe(401);
      expect(receiver.received.map((d) => [d.path.split('?')[0], d.verified])).toEqual([
        ['/hooks/org-b', true],
        ['/hooks/org-b', true],
        ['/hooks/org-b', false],
        [new URL(receiver.url).pathname, true],
        [new URL(receiver.url).pathname, false],
      ]);
      receiver.setSecret(undefined, '/hooks/org-b');
      expect((await post(`${base()}/hooks/org-b`, signedDelivery())).status).toBe(200);
    });

    it.each([
      ['not JSON', 'secret=abc'],
      ['no secret field', '{"key":"abc"}'],
      ['an empty secret', '{"secret":""}'],
      ['a non-string secret', '{"secret":42}'],
      ['a relative path', '{"secret":"abc","path":"hooks/b"}'],
      ['a path with a query', '{"secret":"abc","path":"/hooks?b=1"}'],
      ["one of the receiver's own paths", '{"secret":"abc","path":"/_received"}'],
    ])('PUT /_secret with %s answers 400 and keeps the secret', async (_name, body) => {
      const answer = await request(`${base()}/_secret`, { method: 'PUT', body });
      expect(answer.status).toBe(400);
      expect((await post(receiver.url, signedDelivery())).status).toBe(200);
    });

    it('answers 405 to other methods on the inspection paths and 404 elsewhere, recording nothing', async () => {
      expect((await request(`${base()}/_secret`, { method: 'GET' })).status).toBe(405);
      expect((await request(`${base()}/_received`, { method: 'DELETE' })).status).toBe(405);
      expect((await request(receiver.url, { method: 'GET' })).status).toBe(404);
      expect(receiver.received).toEqual([]);
    });
  });
});
