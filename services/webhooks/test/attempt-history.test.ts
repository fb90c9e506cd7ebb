import { eventually } from '@parametric/test-harness';
import { startWebhookReceiver, type WebhookReceiver } from '@parametric/webhook-receiver';
import { type Platform, startPlatform } from './support';

/**
 * The delivery log row's fields (docs/webhooks.md, "Retries and the delivery log"), exactly: the
 * list shows these and nothing else.
 */
const ROW_FIELDS = [
  'attempts',
  'createdAt',
  'deliveredAt',
  'event',
  'id',
  'lastError',
  'responseStatus',
  'status',
  'updatedAt',
  'url',
];

interface Attempt {
  attempt: number;
  cycle: number;
  attemptedAt: string;
  url: string | null;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
}

describe('the attempt history of a delivery (GET /organizations/me/webhook/deliveries/{id})', () => {
  let p: Platform;
  const receivers: WebhookReceiver[] = [];
  beforeAll(async () => {
    p = await startPlatform();
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await p.stop();
  });

  /** A receiver answering the n-th copy of each delivery (from 1) with `statusOf(n)`, default 200. */
  async function receiverAnswering(statusOf: (copy: number) => number | undefined) {
    const receiver = await startWebhookReceiver({
      respond: (d) => ({
        status: statusOf(receiver.received.filter((r) => r.deliveryId === d.deliveryId).length),
      }),
    });
    receivers.push(receiver);
    return receiver;
  }

  const detail = (id: string, apiKey: string) =>
    p.gateway.api('GET', `/organizations/me/webhook/deliveries/${id}`, { key: apiKey });
  const listRow = async (id: string, apiKey: string) => {
    const log = await p.gateway.api('GET', '/organizations/me/webhook/deliveries?limit=100', { key: apiKey });
    expect(log.status).toBe(200);
    return log.body.data.deliveries.find((d: { id: string }) => d.id === id);
  };
  const ledgerRows = (id: string) =>
    p.db.collection('webhook_delivery_attempts').find({ deliveryId: id }).sort({ attemptedAt: 1 }).toArray();

  it('shows each of three attempts (503, 500, then 200) with its answer, oldest first, next to the unchanged log row', async () => {
    const receiver = await receiverAnswering((copy) => (copy === 1 ? 503 : copy === 2 ? 500 : undefined));
    const org = await p.connectedOrg(receiver);
    await p.emitKybEvent(org.id);
    const id = (await receiver.waitFor(() => true)).deliveryId as string;
    await p.waitForRow(id, (r) => r.status === 'DELIVERED');

    const reply = await detail(id, org.apiKey);
    expect(reply.status).toBe(200);
    const { attemptHistory, ...row } = reply.body.data;
    expect(attemptHistory).toEqual(
      [
        [1, 503, 'HTTP 503'],
        [2, 500, 'HTTP 500'],
        [3, 200, null],
      ].map(([attempt, responseStatus, error]) => ({
        attempt,
        cycle: 0,
        attemptedAt: expect.any(String),
        url: receiver.url,
        responseStatus,
        error,
        durationMs: expect.any(Number),
      })),
    );
    const at = (attemptHistory as Attempt[]).map((a) => Date.parse(a.attemptedAt));
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    for (const a of attemptHistory as Attempt[]) expect(Number.isInteger(a.durationMs)).toBe(true);

    // The row part is the list's row, and the list row is the spec's row: no attemptHistory.
    const listed = await listRow(id, org.apiKey);
    expect(row).toEqual(listed);
    expect(Object.keys(listed).sort()).toEqual(ROW_FIELDS);
    expect(listed).toMatchObject({ status: 'DELIVERED', attempts: 3, responseStatus: 200, lastError: null });

    // The ledger holds exactly one row per attempt (it may be written a moment after the row).
    const stored = await eventually(
      async () => {
        const rows = await ledgerRows(id);
        expect(rows).toHaveLength(3);
        return rows;
      },
      { timeout: 5_000, message: 'three attempts in the ledger' },
    );
    expect(stored.map((r) => [r._id, r.organizationId, r.outcome])).toEqual([
      [`${id}_0_1`, org.id, 'FAILED'],
      [`${id}_0_2`, org.id, 'FAILED'],
      [`${id}_0_3`, org.id, 'DELIVERED'],
    ]);
    expect(JSON.stringify(stored)).not.toContain(org.secret);
  });

  it('keeps the failed attempts of the first cycle visible after a manual retry delivers it', async () => {
    let healthy = false;
    const receiver = await receiverAnswering(() => (healthy ? undefined : 500));
    const org = await p.connectedOrg(receiver);
    await p.emitKybEvent(org.id);
    const id = (await receiver.waitFor(() => true)).deliveryId as string;
    await p.waitForRow(id, (r) => r.status === 'FAILED');
    const failedFirst = (await detail(id, org.apiKey)).body.data.attemptHistory as Attempt[];
    expect(failedFirst.map((a) => [a.cycle, a.attempt, a.responseStatus])).toEqual(
      [1, 2, 3, 4, 5].map((n) => [0, n, 500]),
    );

    healthy = true;
    const retry = await p.gateway.api('POST', `/organizations/me/webhook/deliveries/${id}/retry`, {
      key: org.apiKey,
    });
    expect(retry.status).toBe(200);
    await p.waitForRow(id, (r) => r.status === 'DELIVERED');

    const reply = await detail(id, org.apiKey);
    expect(reply.status).toBe(200);
    // The row is the new cycle's (one attempt); the history keeps the five before it, unchanged.
    expect(reply.body.data).toMatchObject({ status: 'DELIVERED', attempts: 1, responseStatus: 200 });
    const history = reply.body.data.attemptHistory as Attempt[];
    expect(history.slice(0, 5)).toEqual(failedFirst);
    expect(history.map((a) => [a.cycle, a.attempt, a.responseStatus, a.error])).toEqual([
      ...[1, 2, 3, 4, 5].map((n) => [0, n, 500, 'HTTP 500']),
      [1, 1, 200, null],
    ]);
    expect(Object.keys(await listRow(id, org.apiKey)).sort()).toEqual(ROW_FIELDS);
  });

  it("answers 404 NOT_FOUND for another organization's delivery and for an unknown id, 400 for a malformed one", async () => {
    const owner = await p.connectedOrg();
    const stranger = await p.gateway.register();
    await p.emitKybEvent(owner.id);
    const [row] = await eventually(
      async () => {
        const rows = await p.deliveryRows(owner.id);
        expect(rows).toHaveLength(1);
        return rows;
      },
      { timeout: 10_000, message: 'the owner has one delivery' },
    );
    const id = String(row?._id);
    await p.waitForRow(id, (r) => r.status === 'DELIVERED');
    expect((await detail(id, owner.apiKey)).status).toBe(200);

    const foreign = await detail(id, stranger.apiKey);
    const unknown = await detail('1b4e28ba-2fa1-41d2-883f-0016d3cca427', stranger.apiKey);
    expect([foreign.status, foreign.body.error?.code]).toEqual([404, 'NOT_FOUND']);
    // Indistinguishable from a delivery that does not exist.
    expect(foreign.body).toEqual(unknown.body);
    const malformed = await detail('not-an-id', stranger.apiKey);
    expect([malformed.status, malformed.body.error?.code]).toEqual([400, 'INVALID_INPUT']);
  });
});
