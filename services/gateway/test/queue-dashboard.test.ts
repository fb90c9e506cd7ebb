import { QUEUES } from '@parametric/queue';
import { eventually, testRedisUrl } from '@parametric/test-harness';
import { Queue, Worker } from 'bullmq';
import { OPS_TOKEN, startTestGateway, type TestGateway } from './support';

/**
 * The ops queue dashboard (@bull-board at `/ops/queues` on the ops port): every queue of the
 * registry, behind the ops token (a bearer token, or HTTP Basic with the token as password for a
 * browser), read-only unless QUEUE_DASHBOARD_WRITABLE, and each change it makes is audited.
 */

const bearer = { authorization: `Bearer ${OPS_TOKEN}` };
const basic = (password: string) => ({
  authorization: `Basic ${Buffer.from(`ops:${password}`).toString('base64')}`,
});

interface BoardQueue {
  name: string;
  readOnlyMode: boolean;
  counts: Record<string, number>;
  jobs: Array<{ id: string; failedReason?: string }>;
}

async function boardQueues(g: TestGateway, query = ''): Promise<BoardQueue[]> {
  const res = await fetch(`${dashboardUrl(g)}/api/queues${query}`, { headers: bearer });
  expect(res.status).toBe(200);
  return ((await res.json()) as { queues: BoardQueue[] }).queues;
}

const dashboardUrl = (g: TestGateway) => `${g.gateway.opsUrl}/queues`;

/** A job on the gateway's `events` queue that failed its only attempt. */
async function failedJob(g: TestGateway): Promise<{ queue: Queue; id: string; close(): Promise<void> }> {
  const connection = { url: testRedisUrl() };
  const queue = new Queue('events', { connection, prefix: g.config.REDIS_PREFIX });
  const job = await queue.add('broken', { event: 'not-an-event' }, { attempts: 1 });
  const worker = new Worker(
    'events',
    async () => {
      throw new Error('refused by the test worker');
    },
    { connection, prefix: g.config.REDIS_PREFIX },
  );
  await new Promise<void>((resolve) => worker.on('failed', () => resolve()));
  await worker.close();
  return { queue, id: String(job.id), close: () => queue.close() };
}

describe('the queue dashboard, read-only by default', () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway();
  });
  afterAll(async () => {
    await g?.stop();
  });

  it('refuses a request without the ops token, asking a browser for credentials', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token' }, basic('wrong-token')]) {
      const res = await fetch(dashboardUrl(g), { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="ops"/);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    }
    // The rest of the ops API takes the bearer token only.
    const api = await fetch(`${g.gateway.opsUrl}/audit`, { headers: basic(OPS_TOKEN) });
    expect(api.status).toBe(401);
    expect(api.headers.get('www-authenticate')).toBeNull();
  });

  it('serves the dashboard to the ops token, as a bearer token or a browser’s Basic password', async () => {
    for (const headers of [bearer, basic(OPS_TOKEN)]) {
      const res = await fetch(dashboardUrl(g), { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/html/);
      expect(await res.text()).toContain('Platform queues');
    }
    // Never on the partner port, whoever asks.
    const { apiKey } = await g.register();
    expect((await fetch(`${g.gateway.partnerUrl}/queues`, { headers: { 'x-api-key': apiKey } })).status).toBe(
      404,
    );
  });

  it('shows every queue of the registry, read-only, with a failed job and its reason', async () => {
    const failed = await failedJob(g);
    try {
      const queues = await boardQueues(g, '?activeQueue=events&status=failed');
      expect(queues.map((q) => q.name).sort()).toEqual(Object.keys(QUEUES).sort());
      expect(queues.every((q) => q.readOnlyMode)).toBe(true);
      const events = queues.find((q) => q.name === 'events');
      expect(events?.counts.failed).toBe(1);
      expect(events?.jobs.map((j) => [j.id, j.failedReason])).toEqual([
        [failed.id, 'refused by the test worker'],
      ]);

      // A retry is refused and changes nothing.
      const retry = await fetch(`${dashboardUrl(g)}/api/queues/events/${failed.id}/retry`, {
        method: 'PUT',
        headers: bearer,
      });
      expect(retry.status).toBe(403);
      expect(((await retry.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
      expect(await (await failed.queue.getJob(failed.id))?.getState()).toBe('failed');
    } finally {
      await failed.queue.obliterate({ force: true });
      await failed.close();
    }
  });
});

describe('the queue dashboard with QUEUE_DASHBOARD_WRITABLE=true', () => {
  let g: TestGateway;
  beforeAll(async () => {
    g = await startTestGateway({ QUEUE_DASHBOARD_WRITABLE: 'true' });
  });
  afterAll(async () => {
    await g?.stop();
  });

  it('retries a failed job and records the action in the ops audit trail', async () => {
    const failed = await failedJob(g);
    try {
      expect((await boardQueues(g, '?activeQueue=events&status=failed')).every((q) => !q.readOnlyMode)).toBe(
        true,
      );
      const retry = await fetch(`${dashboardUrl(g)}/api/queues/events/${failed.id}/retry`, {
        method: 'PUT',
        headers: bearer,
      });
      expect(retry.status).toBe(204);
      expect(await (await failed.queue.getJob(failed.id))?.getState()).toBe('waiting');
      // Written once the answer has gone (the retry happened whether or not the entry is).
      const trail = await eventually(async () => {
        const reply = await g.ops('GET', '/audit?action=opsQueueDashboard');
        expect(reply.body.data).toHaveLength(1);
        return reply;
      });
      expect(trail.body.data).toEqual([
        expect.objectContaining({
          action: 'opsQueueDashboard',
          method: 'PUT',
          path: `/ops/queues/api/queues/events/${failed.id}/retry`,
          status: 204,
        }),
      ]);
    } finally {
      await failed.queue.obliterate({ force: true });
      await failed.close();
    }
  });
});
