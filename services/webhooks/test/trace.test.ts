import { parseTraceparent } from '@parametric/tracing';
import { type Platform, startPlatform } from './support';

describe('a delivery continues the trace of the request that caused its event', () => {
  let p: Platform;
  beforeAll(async () => {
    p = await startPlatform();
  });
  afterAll(async () => {
    await p.stop();
  });

  it("sends a traceparent header with the request's trace id, and a body with no trace in it", async () => {
    const org = await p.connectedOrg();
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const reply = await p.gateway.ops('POST', `/organizations/${org.id}/kyb`, {
      body: { status: 'VERIFIED', notes: 'kyb check' },
      headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` },
    });
    expect(reply.status).toBe(200);

    const delivery = await p.receiver.waitFor((d) => d.event === 'kyb.verified' && d.body !== null);
    expect(parseTraceparent(delivery.headers.traceparent)?.traceId).toBe(traceId);
    // Exactly the four fields of the spec's envelope: the event's internal `trace` stays ours.
    expect(Object.keys(delivery.body as object).sort()).toEqual(['createdAt', 'data', 'event', 'id']);
    expect(delivery.rawBody).not.toMatch(/trace/i);
    expect(delivery.verified).toBe(true);
  });
});
