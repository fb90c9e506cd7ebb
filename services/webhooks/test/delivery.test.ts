import { EVENT_CATALOG, EVENT_NAMES } from '@parametric/events';
import { eventually } from '@parametric/test-harness';
import { startWebhookReceiver, verifyWebhook } from '@parametric/webhook-receiver';
import { type Envelope, type Platform, startPlatform } from './support';

describe('webhook delivery', () => {
  let p: Platform;
  beforeAll(async () => {
    p = await startPlatform();
  });
  afterAll(async () => {
    await p.stop();
  });
  afterEach(() => {
    p.receiver.setBehaviour(undefined);
  });

  it('delivers kyb.verified from the ops API to the partner end to end, signed and logged as DELIVERED', async () => {
    const org = await p.connectedOrg();
    await p.gateway.ops('POST', `/organizations/${org.id}/kyb`, { body: { status: 'VERIFIED' } });
    const got = await p.receiver.waitFor(
      (d) => d.verified && (d.body as Envelope)?.data?.organizationId === org.id,
    );
    const body = got.body as Envelope;
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      event: 'kyb.verified',
      createdAt: expect.any(String),
      data: { organizationId: org.id, kybStatus: 'VERIFIED' },
    });
    expect(got.headers['x-service-event']).toBe('kyb.verified');
    expect(got.headers['x-service-delivery']).toBe(body.id);
    expect(got.headers['user-agent']).toBe('Service-Webhooks/1.0');
    expect(got.headers['x-service-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(Math.abs(Number(got.headers['x-service-timestamp']) - Date.now() / 1000)).toBeLessThan(60);

    const row = await p.waitForRow(body.id, (r) => r.status === 'DELIVERED');
    expect(row).toMatchObject({ attempts: 1, responseStatus: 200, lastError: null });
    const log = await p.gateway.api('GET', '/organizations/me/webhook/deliveries', { key: org.apiKey });
    expect(log.body.data.deliveries[0]).toEqual({
      id: body.id,
      event: 'kyb.verified',
      url: p.receiver.url,
      status: 'DELIVERED',
      attempts: 1,
      responseStatus: 200,
      lastError: null,
      deliveredAt: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(log.body.data.deliveries[0]).not.toHaveProperty('body');
  });

  it('signs with the current secret: after rotation the old secret no longer verifies, the new one does', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const org = await p.connectedOrg(receiver);
      const oldSecret = org.secret;
      const rotated = await p.gateway.api('POST', '/organizations/me/webhook/rotate-secret', {
        key: org.apiKey,
      });
      expect(rotated.status).toBe(200);
      const newSecret = rotated.body.data.secret as string;
      expect(newSecret).not.toBe(oldSecret);
      expect(newSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);

      await p.emitKybEvent(org.id);
      const got = await receiver.waitFor(() => true);
      const raw = Buffer.from(got.rawBody);
      expect(verifyWebhook({ rawBody: raw, headers: got.headers, secret: oldSecret })).toMatchObject({
        ok: false,
        reason: 'bad-signature',
      });
      expect(verifyWebhook({ rawBody: raw, headers: got.headers, secret: newSecret })).toMatchObject({
        ok: true,
      });
    } finally {
      await receiver.close();
    }
  });

  it('retries a failing endpoint on the backoff schedule and marks it FAILED after the fifth attempt, always with the same id', async () => {
    const receiver = await startWebhookReceiver({ respond: () => ({ status: 500 }) });
    try {
      const org = await p.connectedOrg(receiver);
      await p.emitKybEvent(org.id);
      const first = await receiver.waitFor(() => true);
      const row = await p.waitForRow(first.deliveryId as string, (r) => r.status === 'FAILED');
      expect(row).toMatchObject({
        attempts: 5,
        responseStatus: 500,
        lastError: 'HTTP 500',
        nextAttemptAt: null,
      });
      const copies = receiver.received.filter((d) => d.deliveryId === first.deliveryId);
      expect(copies).toHaveLength(5);
      expect(new Set(copies.map((d) => (d.body as Envelope).id))).toEqual(new Set([first.deliveryId]));
      expect(new Set(copies.map((d) => d.rawBody)).size).toBe(1);
      // No sixth attempt arrives later.
      expect(await p.webhooks.reconcile()).toBe(0);
    } finally {
      await receiver.close();
    }
  });

  it('counts an answer that takes longer than the timeout as a failed attempt', async () => {
    const receiver = await startWebhookReceiver({ respond: () => ({ hang: true }) });
    try {
      const org = await p.connectedOrg(receiver);
      await p.emitKybEvent(org.id);
      const first = await receiver.waitFor(() => true);
      const row = await p.waitForRow(first.deliveryId as string, (r) => r.attempts >= 1);
      expect(row.lastError).toBe(`no answer within ${p.config.DELIVERY_TIMEOUT_MS} ms`);
      expect(row.responseStatus).toBeNull();
    } finally {
      await receiver.close();
    }
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const receiver = await startWebhookReceiver({ respond: () => ({ status: 302 }) });
    try {
      const org = await p.connectedOrg(receiver);
      await p.emitKybEvent(org.id);
      const first = await receiver.waitFor(() => true);
      const row = await p.waitForRow(first.deliveryId as string, (r) => r.attempts >= 1);
      expect(row.lastError).toBe('HTTP 302');
    } finally {
      await receiver.close();
    }
  });

  it('a manual retry resends the same body.id and bytes to the current URL, signed with the current secret', async () => {
    const failing = await startWebhookReceiver({ respond: () => ({ status: 503 }) });
    const healthy = await startWebhookReceiver();
    try {
      const org = await p.connectedOrg(failing);
      await p.emitKybEvent(org.id);
      const first = await failing.waitFor(() => true);
      const id = first.deliveryId as string;
      await p.waitForRow(id, (r) => r.status === 'FAILED');

      // Move the webhook and rotate the secret; the retry must use both.
      await p.gateway.api('PUT', '/organizations/me/webhook', {
        key: org.apiKey,
        body: { url: healthy.url },
      });
      const rotated = await p.gateway.api('POST', '/organizations/me/webhook/rotate-secret', {
        key: org.apiKey,
      });
      healthy.setSecret(rotated.body.data.secret);

      const retry = await p.gateway.api('POST', `/organizations/me/webhook/deliveries/${id}/retry`, {
        key: org.apiKey,
      });
      expect(retry.status).toBe(200);
      expect(retry.body.data).toMatchObject({
        id,
        event: first.event,
        status: 'PENDING',
        attempts: 0,
        url: healthy.url,
      });

      const again = await healthy.waitFor((d) => d.deliveryId === id);
      expect(again.verified).toBe(true);
      expect(again.rawBody).toBe(first.rawBody);
      const row = await p.waitForRow(id, (r) => r.status === 'DELIVERED');
      expect(row.attempts).toBe(1);
    } finally {
      await failing.close();
      await healthy.close();
    }
  });

  it('keeps an event emitted before any webhook URL waiting, and delivers it once a URL is set, without a retry', async () => {
    const org = await p.gateway.register();
    await p.emitKybEvent(org.id);
    const rows = await waitForRows(p, org.id, 1);
    expect(rows[0]).toMatchObject({
      status: 'PENDING',
      attempts: 0,
      nextAttemptAt: null,
      lastError: 'No webhook URL configured yet: delivered once one is set',
    });
    const waiting = await p.gateway.api('GET', '/organizations/me/webhook/deliveries', { key: org.apiKey });
    expect(waiting.body.data.deliveries).toEqual([
      expect.objectContaining({ id: rows[0]?._id, status: 'PENDING', attempts: 0, url: null }),
    ]);
    // Nothing is attempted while there is no URL, and a manual retry still needs one.
    expect(await p.webhooks.reconcile()).toBe(0);
    const noUrl = await p.gateway.api('POST', `/organizations/me/webhook/deliveries/${rows[0]?._id}/retry`, {
      key: org.apiKey,
    });
    expect(noUrl.status).toBe(400);
    expect(noUrl.body.error.code).toBe('INVALID_INPUT');

    // The secret exists only once the URL is set, and the delivery goes at once: the receiver
    // answers 200 to anything and the test verifies the signature with the PUT's secret.
    const receiver = await startWebhookReceiver({ respond: () => ({ status: 200 }) });
    try {
      const put = await p.gateway.api('PUT', '/organizations/me/webhook', {
        key: org.apiKey,
        body: { url: receiver.url },
      });
      expect(put.status).toBe(200);
      const got = await receiver.waitFor((d) => d.deliveryId === rows[0]?._id);
      expect(
        verifyWebhook({
          rawBody: Buffer.from(got.rawBody),
          headers: got.headers,
          secret: put.body.data.secret,
        }),
      ).toMatchObject({ ok: true });
      expect((got.body as Envelope).event).toBe('kyb.verified');
      const row = await p.waitForRow(rows[0]?._id as string, (r) => r.status === 'DELIVERED');
      expect(row).toMatchObject({ attempts: 1, cycle: 0, responseStatus: 200, lastError: null });
      // Setting the URL again starts nothing twice.
      await p.gateway.api('PUT', '/organizations/me/webhook', {
        key: org.apiKey,
        body: { url: receiver.url },
      });
      expect(await p.webhooks.reconcile()).toBe(0);
      expect(receiver.received.filter((d) => d.deliveryId === rows[0]?._id)).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('the reconciler starts a delivery still waiting for a URL the organization already has (a release cut short)', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const org = await p.connectedOrg(receiver);
      const id = '3f2b8c1e-5d4a-4e6f-9a7b-2c1d0e9f8a7b';
      const body = JSON.stringify({
        id,
        event: 'kyb.verified',
        createdAt: new Date().toISOString(),
        data: { organizationId: org.id, kybStatus: 'VERIFIED' },
      });
      // Recorded while there was no URL, older than the reconciler's grace; the URL's request
      // died before releasing it.
      const longAgo = new Date(Date.now() - 60 * 60_000);
      await p.db.collection('webhook_deliveries').insertOne({
        _id: id as never,
        organizationId: org.id,
        event: 'kyb.verified',
        body,
        url: null,
        status: 'PENDING',
        attempts: 0,
        cycle: 0,
        responseStatus: null,
        lastError: 'No webhook URL configured yet: delivered once one is set',
        deliveredAt: null,
        nextAttemptAt: null,
        createdAt: longAgo,
        updatedAt: longAgo,
      });
      expect(await p.webhooks.reconcile()).toBe(1);
      const got = await receiver.waitFor((d) => d.deliveryId === id);
      expect(got.verified).toBe(true);
      expect(got.rawBody).toBe(body);
      expect((await p.waitForRow(id, (r) => r.status === 'DELIVERED')).attempts).toBe(1);
    } finally {
      await receiver.close();
    }
  });

  it('sends a signed test event of every catalog event to the URL, valid against the catalog and marked test in the log', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const org = await p.connectedOrg(receiver);
      for (const event of EVENT_NAMES) {
        const sent = await p.gateway.api('POST', '/organizations/me/webhook/test', {
          key: org.apiKey,
          body: { event },
        });
        expect(sent.status).toBe(202);
        expect(sent.body.data).toMatchObject({
          event,
          status: 'PENDING',
          attempts: 0,
          url: receiver.url,
          test: true,
        });
        const got = await receiver.waitFor((d) => d.deliveryId === sent.body.data.id);
        expect(got.verified).toBe(true);
        expect(got.headers['x-service-event']).toBe(event);
        const body = got.body as Envelope;
        expect(body.id).toBe(sent.body.data.id);
        // Exactly what a real event of that name carries: the catalog's strict schema.
        expect(EVENT_CATALOG[event].safeParse(body.data).success).toBe(true);
        if ('organizationId' in body.data) expect(body.data.organizationId).toBe(org.id);
        await p.waitForRow(sent.body.data.id, (r) => r.status === 'DELIVERED');
      }
      const log = await p.gateway.api('GET', '/organizations/me/webhook/deliveries?limit=100', {
        key: org.apiKey,
      });
      const tests = log.body.data.deliveries.filter((d: { test?: boolean }) => d.test === true);
      expect(tests).toHaveLength(EVENT_NAMES.length);
      expect(tests.every((d: { status: string }) => d.status === 'DELIVERED')).toBe(true);
    } finally {
      await receiver.close();
    }
  });

  it('refuses a test event without a URL (400) or of an unknown event (400), and records nothing', async () => {
    const org = await p.gateway.register();
    const noUrl = await p.gateway.api('POST', '/organizations/me/webhook/test', {
      key: org.apiKey,
      body: { event: 'kyb.verified' },
    });
    expect(noUrl.status).toBe(400);
    expect(noUrl.body.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: 'No webhook URL is configured',
    });
    const connected = await p.connectedOrg();
    const unknown = await p.gateway.api('POST', '/organizations/me/webhook/test', {
      key: connected.apiKey,
      body: { event: 'policy.exploded' },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('INVALID_INPUT');
    expect(await p.deliveryRows(org.id)).toHaveLength(0);
    expect(await p.deliveryRows(connected.id)).toHaveLength(0);
  });

  it("answers 404 for another organization's delivery and changes nothing", async () => {
    const owner = await p.connectedOrg();
    const stranger = await p.gateway.register();
    await p.emitKybEvent(owner.id);
    const [row] = await waitForRows(p, owner.id, 1);
    if (!row) throw new Error('no delivery row');
    await p.waitForRow(row._id, (r) => r.status === 'DELIVERED');
    const reply = await p.gateway.api('POST', `/organizations/me/webhook/deliveries/${row?._id}/retry`, {
      key: stranger.apiKey,
    });
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('NOT_FOUND');
    expect((await p.waitForRow(row._id, () => true)).status).toBe('DELIVERED');
    const unknown = await p.gateway.api(
      'POST',
      '/organizations/me/webhook/deliveries/1b4e28ba-2fa1-41d2-883f-0016d3cca427/retry',
      {
        key: stranger.apiKey,
      },
    );
    expect(unknown.status).toBe(404);
    const malformed = await p.gateway.api('POST', '/organizations/me/webhook/deliveries/not-an-id/retry', {
      key: stranger.apiKey,
    });
    expect(malformed.status).toBe(400);
  });

  it('delivers one event once even when the events queue carries it twice (a relay retried after a crash)', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const org = await p.connectedOrg(receiver);
      const { Queue } = await import('bullmq');
      const events = new Queue('events', {
        connection: { url: p.config.REDIS_URL },
        prefix: p.config.REDIS_PREFIX,
      });
      const event = {
        id: '0f8fad5b-d9cb-469f-a165-70867728950e',
        event: 'kyb.verified',
        createdAt: new Date().toISOString(),
        organizationId: org.id,
        data: { organizationId: org.id, kybStatus: 'VERIFIED' },
      };
      await events.add('events', event, { jobId: 'copy-1' });
      await events.add('events', event, { jobId: 'copy-2' });
      await events.close();
      await p.waitForRow(event.id, (r) => r.status === 'DELIVERED');
      expect(await p.db.collection('webhook_deliveries').countDocuments({ _id: event.id as never })).toBe(1);
      expect(receiver.verified().filter((d) => d.deliveryId === event.id)).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('an event the relay sends again after Redis lost its data (same id, its row DELIVERED) is not delivered again', async () => {
    const receiver = await startWebhookReceiver();
    const { Queue } = await import('bullmq');
    const events = new Queue('events', {
      connection: { url: p.config.REDIS_URL },
      prefix: p.config.REDIS_PREFIX,
    });
    try {
      const org = await p.connectedOrg(receiver);
      const event = {
        id: '7c9e6679-7425-40de-944e-07dc4a716a5e',
        event: 'kyb.verified',
        createdAt: new Date().toISOString(),
        organizationId: org.id,
        data: { organizationId: org.id, kybStatus: 'VERIFIED' },
      };
      await events.add('events', event, { jobId: event.id });
      const delivered = await p.waitForRow(event.id, (r) => r.status === 'DELIVERED');
      await eventually(async () => expect(await events.getJobState(event.id)).toBe('completed'));

      // Redis comes back without the job; the relay re-sends the kept copy under the same id.
      await (await events.getJob(event.id))?.remove();
      await events.add('events', event, { jobId: event.id });
      await eventually(async () => expect(await events.getJobState(event.id)).toBe('completed'));

      expect(receiver.verified().filter((d) => d.deliveryId === event.id)).toHaveLength(1);
      const rows = await p.db
        .collection('webhook_deliveries')
        .find({ _id: event.id as never })
        .toArray();
      expect(rows).toEqual([
        expect.objectContaining({ status: 'DELIVERED', attempts: 1, cycle: delivered.cycle }),
      ]);
    } finally {
      await events.close();
      await receiver.close();
    }
  });
});

function waitForRows(p: Platform, orgId: string, n: number) {
  return eventually(
    async () => {
      const rows = await p.deliveryRows(orgId);
      expect(rows.length).toBeGreaterThanOrEqual(n);
      return rows;
    },
    { timeout: 15_000, message: `${n} delivery rows for ${orgId}` },
  );
}
