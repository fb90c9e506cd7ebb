import { eventually } from '@parametric/test-harness';
import { type Platform, startPlatform } from './support';

describe('delivery log', () => {
  let p: Platform;
  let org: { id: string; apiKey: string };
  const ids: string[] = [];
  beforeAll(async () => {
    p = await startPlatform();
    org = await p.connectedOrg();
    for (let i = 0; i < 7; i++) await p.emitKybEvent(org.id);
    const rows = await eventually(
      async () => {
        const all = await p.deliveryRows(org.id);
        expect(all.map((r) => r.status)).toEqual(Array(7).fill('DELIVERED'));
        return all;
      },
      { timeout: 15_000, message: 'setup: seven deliveries DELIVERED' },
    );
    ids.push(...rows.map((r) => String(r._id)));
  });
  afterAll(async () => {
    await p.stop();
  });

  const log = (query: string, apiKey = org.apiKey) =>
    p.gateway.api('GET', `/organizations/me/webhook/deliveries${query}`, { key: apiKey });

  it('answers { deliveries, total, page, limit } with newest first and pages through them', async () => {
    const page1 = await log('?limit=3&page=1');
    expect(page1.status).toBe(200);
    expect(Object.keys(page1.body.data).sort()).toEqual(['deliveries', 'limit', 'page', 'total']);
    expect(page1.body.data).toMatchObject({ total: 7, page: 1, limit: 3 });
    const page3 = await log('?limit=3&page=3');
    expect(page3.body.data.deliveries).toHaveLength(1);
    const all = [
      ...page1.body.data.deliveries,
      ...(await log('?limit=3&page=2')).body.data.deliveries,
      ...page3.body.data.deliveries,
    ].map((d: { id: string }) => d.id);
    expect(new Set(all)).toEqual(new Set(ids));
    const created = [...page1.body.data.deliveries].map((d: { createdAt: string }) => d.createdAt);
    expect([...created].sort().reverse()).toEqual(created);
  });

  it('caps limit at 100', async () => {
    const reply = await log('?limit=500');
    expect(reply.status).toBe(200);
    expect(reply.body.data.limit).toBe(100);
    expect(reply.body.data.deliveries).toHaveLength(7);
  });

  it('filters by status', async () => {
    expect((await log('?status=DELIVERED')).body.data.total).toBe(7);
    expect((await log('?status=FAILED')).body.data).toMatchObject({ total: 0, deliveries: [] });
  });

  it.each(['?status=LOST', '?limit=0', '?page=0', '?limit=abc'])(
    'rejects %s with 400 INVALID_INPUT',
    async (query) => {
      const reply = await log(query);
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    },
  );

  it('shows another organization none of these deliveries', async () => {
    const other = await p.gateway.register();
    expect((await log('', other.apiKey)).body.data).toEqual({ deliveries: [], total: 0, page: 1, limit: 20 });
  });
});
