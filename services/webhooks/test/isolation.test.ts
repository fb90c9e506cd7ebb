import { startWebhookReceiver } from '@parametric/webhook-receiver';
import { type Platform, startPlatform } from './support';

describe('one dead partner endpoint does not delay the others', () => {
  let p: Platform;
  beforeAll(async () => {
    // Few delivery slots and a long timeout make the effect impossible to miss.
    p = await startPlatform({
      DELIVERY_CONCURRENCY: '6',
      DELIVERY_CONCURRENCY_PER_ORG: '2',
      DELIVERY_TIMEOUT_MS: '4000',
    });
  });
  afterAll(async () => {
    await p.stop();
  });

  it('delivers to a healthy endpoint while a dozen deliveries to a never-answering one are still waiting', async () => {
    const dead = await startWebhookReceiver({ respond: () => ({ hang: true }) });
    const healthy = await startWebhookReceiver();
    try {
      const slowOrg = await p.connectedOrg(dead);
      const fastOrg = await p.connectedOrg(healthy);
      for (let i = 0; i < 12; i++) await p.emitKybEvent(slowOrg.id);
      // The dead endpoint has been reached (its requests are hanging) before the healthy org's event exists.
      await dead.waitForCount(2);
      await p.emitKybEvent(fastOrg.id);
      const got = await healthy.waitFor((d) => d.verified, 3500);
      expect(got.event).toBe('kyb.verified');
      // When the healthy delivery arrived, no attempt to the dead endpoint had finished yet: each
      // of its 12 rows is still pending, and any attempt recorded by the time they are read (a
      // slow machine reads them after the 4 s timeout) finished after the healthy one arrived.
      const arrivedAt = Date.parse(got.receivedAt);
      const slowRows = await p.deliveryRows(slowOrg.id);
      expect(slowRows).toHaveLength(12);
      const finishedBefore = slowRows.filter((r) => {
        const last = r.lastAttempt as { attemptedAt: Date; durationMs: number } | undefined;
        return r.attempts > 0 && (!last || last.attemptedAt.getTime() + last.durationMs <= arrivedAt);
      });
      expect(finishedBefore).toEqual([]);
      expect(slowRows.every((r) => r.status === 'PENDING')).toBe(true);
    } finally {
      await dead.close();
      await healthy.close();
    }
  });
});
