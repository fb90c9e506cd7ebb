import { randomUUID } from 'node:crypto';
import { eventually } from '@parametric/test-harness';
import { startWebhookReceiver } from '@parametric/webhook-receiver';
import { Queue } from 'bullmq';
import { type Platform, startPlatform } from './support';

/** Events put straight on the `events` queue, as the services' outbox relays do. */
describe('events consumed in batches', () => {
  let p: Platform;
  let events: Queue;
  beforeAll(async () => {
    p = await startPlatform();
    events = new Queue('events', { connection: { url: p.config.REDIS_URL }, prefix: p.config.REDIS_PREFIX });
  });
  afterAll(async () => {
    await events.close();
    await p.stop();
  });

  const kybEvent = (organizationId: string) => ({
    id: randomUUID(),
    event: 'kyb.verified',
    createdAt: new Date().toISOString(),
    organizationId,
    data: { organizationId, kybStatus: 'VERIFIED' },
  });

  it('records a burst of events with one row each, delivers each once, and a copy in the burst adds nothing', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const org = await p.connectedOrg(receiver);
      const noUrl = await p.gateway.register();
      const burst = Array.from({ length: 40 }, () => kybEvent(org.id));
      const orphan = kybEvent(noUrl.id);
      const copied = burst[7] as ReturnType<typeof kybEvent>;
      await events.addBulk([
        ...burst.map((e) => ({ name: 'events', data: e, opts: { jobId: e.id } })),
        { name: 'events', data: copied, opts: { jobId: `${copied.id}-copy` } },
        { name: 'events', data: orphan, opts: { jobId: orphan.id } },
      ]);

      const rows = await eventually(
        async () => {
          const all = await p.deliveryRows(org.id);
          expect(all.filter((r) => r.status === 'DELIVERED')).toHaveLength(40);
          return all;
        },
        { timeout: 20_000, message: '40 deliveries DELIVERED' },
      );
      expect(rows).toHaveLength(40);
      expect(rows.every((r) => r.attempts === 1 && r.responseStatus === 200)).toBe(true);
      expect(new Set(receiver.verified().map((d) => d.deliveryId))).toEqual(new Set(burst.map((e) => e.id)));
      expect(receiver.received.filter((d) => d.deliveryId === copied.id)).toHaveLength(1);

      const [orphanRow] = await eventually(
        async () => {
          const found = await p.deliveryRows(noUrl.id);
          expect(found).toHaveLength(1);
          return found;
        },
        { message: 'the waiting row of the organization without a URL' },
      );
      expect(orphanRow).toMatchObject({
        status: 'PENDING',
        attempts: 0,
        nextAttemptAt: null,
        lastError: 'No webhook URL configured yet: delivered once one is set',
      });
    } finally {
      await receiver.close();
    }
  });

  it('makes the first attempt in the event job itself: no delivery job is queued for it', async () => {
    const receiver = await startWebhookReceiver();
    const deliveries = new Queue('webhook-deliveries', {
      connection: { url: p.config.REDIS_URL },
      prefix: p.config.REDIS_PREFIX,
    });
    try {
      const org = await p.connectedOrg(receiver);
      const event = kybEvent(org.id);
      await events.add('events', event, { jobId: event.id });
      await p.waitForRow(event.id, (r) => r.status === 'DELIVERED');
      expect(await deliveries.getJob(`${event.id}_0_1`)).toBeUndefined();
      const job = await events.getJob(event.id);
      expect(await job?.getState()).toBe('completed');
    } finally {
      await deliveries.close();
      await receiver.close();
    }
  });

  it('an event that arrives again after its delivery changes nothing and sends nothing', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const org = await p.connectedOrg(receiver);
      const event = kybEvent(org.id);
      await events.add('events', event, { jobId: event.id });
      const delivered = await p.waitForRow(event.id, (r) => r.status === 'DELIVERED');
      const late = await events.add('events', event, { jobId: `${event.id}-late` });
      await eventually(async () => expect(await late.getState()).toBe('completed'), {
        message: 'the late copy handled',
      });
      expect(await p.waitForRow(event.id, () => true)).toEqual(delivered);
      expect(receiver.received.filter((d) => d.deliveryId === event.id)).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});
