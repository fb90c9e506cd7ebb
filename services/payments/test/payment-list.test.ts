import { eventually } from '@parametric/test-harness';
import { type PaymentsPlatform, pendingTier2Policy, startPaymentsPlatform } from './support';

// GET /payments (docs/api.md, "Pagination"): the organization's premium payments, newest first,
// paginated and filtered, through the gateway as partners call it. The simulator answers by
// phone number: …001 pays, …032 is cancelled by the customer, …090 never answers (PENDING).

let p: PaymentsPlatform;

beforeAll(async () => {
  p = await startPaymentsPlatform();
}, 120_000);

afterAll(async () => {
  await p?.stop();
});

const list = (key: string, query = '') => p.gateway.api('GET', `/payments${query}`, { key });
const ids = (reply: { body: { data: { transactionId: string }[] } }) =>
  reply.body.data.map((x) => x.transactionId);

async function prompt(key: string, policy: { id: string; premium: number }, phoneNumber: string) {
  const reply = await p.gateway.api('POST', '/payments/initiate', {
    key,
    body: { reference: policy.id, amount: policy.premium, phoneNumber },
  });
  if (reply.status !== 201) throw new Error(JSON.stringify(reply.body));
  return reply.body.data.transactionId as string;
}

async function settled(key: string, id: string, status: 'SUCCEEDED' | 'FAILED') {
  await eventually(
    async () => {
      const read = await p.gateway.api('GET', `/payments/${id}`, { key });
      expect(read.body.data.status).toBe(status);
    },
    { message: `payment ${id} to be ${status}` },
  );
}

describe('GET /payments', () => {
  let key: string;
  let policyA: string;
  let cancelled: string;
  let paid: string;
  let pending: string;
  let theirs: string;

  beforeAll(async () => {
    const a = await pendingTier2Policy(p);
    const b = await pendingTier2Policy(p, { org: a.org });
    key = a.org.apiKey;
    policyA = a.policy.id;
    cancelled = await prompt(key, a.policy, '+254711000032');
    await settled(key, cancelled, 'FAILED');
    paid = await prompt(key, a.policy, '+254711000001');
    await settled(key, paid, 'SUCCEEDED');
    pending = await prompt(key, b.policy, '+254711000090');
    const other = await pendingTier2Policy(p);
    theirs = await prompt(other.org.apiKey, other.policy, '+254711000090');
  });

  it("lists only the caller's payments, newest first, each as GET /payments/{id} answers it", async () => {
    const reply = await list(key);
    expect([reply.status, reply.body.success]).toEqual([200, true]);
    expect(ids(reply)).toEqual([pending, paid, cancelled]);
    expect(ids(reply)).not.toContain(theirs);
    expect(reply.body.pagination).toEqual({ page: 1, limit: 20, total: 3, totalPages: 1 });
    const one = await p.gateway.api('GET', `/payments/${paid}`, { key });
    expect(reply.body.data[1]).toEqual(one.body.data);
  });

  it('pages with totals', async () => {
    const first = await list(key, '?limit=2');
    const second = await list(key, '?limit=2&page=2');
    expect(first.body.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 });
    expect([...ids(first), ...ids(second)]).toEqual([pending, paid, cancelled]);
  });

  it('filters by status and policyId, and the filters combine', async () => {
    expect(ids(await list(key, '?status=PENDING'))).toEqual([pending]);
    expect(ids(await list(key, `?policyId=${policyA}`))).toEqual([paid, cancelled]);
    const failedOfA = await list(key, `?policyId=${policyA}&status=FAILED`);
    expect([ids(failedOfA), failedOfA.body.pagination.total]).toEqual([[cancelled], 1]);
    expect((await list(key, `?policyId=${policyA}&status=PENDING`)).body.pagination.total).toBe(0);
  });

  it('refuses bad filters, unknown parameters and bad paging with INVALID_INPUT naming each', async () => {
    const bad = await list(key, '?status=PAID&policyId=42&limit=0&provider=MPESA');
    expect(bad.status).toBe(400);
    expect(bad.body.success).toBe(false);
    expect(bad.body.error.code).toBe('INVALID_INPUT');
    expect(bad.body.error.message).toBe('Invalid query parameters');
    expect(bad.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'status', message: 'must be one of PENDING, SUCCEEDED, FAILED' },
        { field: 'policyId', message: 'must be a uuid' },
        { field: 'limit', message: 'must be at least 1' },
        {
          field: 'provider',
          message: 'Unknown query parameter: this endpoint takes page, limit, status, policyId',
        },
      ]),
    );
  });
});
