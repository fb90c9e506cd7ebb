import { randomUUID } from 'node:crypto';
import { type ApprovalAction, FOUR_EYES_ROUTES } from '@parametric/contracts';
import type { DataResponse } from '@parametric/http';
import { type PolicyPlatform, startPolicyPlatform } from '../../policy/test/support';
import { call, type SignedInOperator, signInOperator } from './support';

/**
 * Four eyes through the gateway (issue 25; docs/ops.md, "Four eyes"), over real sockets with the
 * policy service behind it: an operator's money-moving request waits for a second operator, who
 * carries it out once. The rules on their own: test/domain/approvals.test.ts.
 */
let p: PolicyPlatform;
let first: SignedInOperator;
let second: SignedInOperator;
let finance: SignedInOperator;
let support: SignedInOperator;
let admin: SignedInOperator;

beforeAll(async () => {
  p = await startPolicyPlatform({}, { OPS_APPROVAL_CAPACITY_THRESHOLD: '1000000' });
  [first, second, finance, support, admin] = await Promise.all([
    signInOperator(p.gateway, 'UNDERWRITER'),
    signInOperator(p.gateway, 'UNDERWRITER'),
    signInOperator(p.gateway, 'FINANCE'),
    signInOperator(p.gateway, 'SUPPORT'),
    signInOperator(p.gateway, 'OPS_ADMIN'),
  ]);
});
afterAll(async () => {
  await p?.stop();
});

const as = (who: SignedInOperator) => (method: string, path: string, body?: unknown) =>
  call(method, `${p.gateway.gateway.opsUrl}${path}`, {
    headers: { authorization: `Bearer ${who.accessToken}` },
    ...(body === undefined ? {} : { body }),
  });
const tierOf = async (id: string) =>
  (await p.gateway.ops('GET', `/organizations/${id}`)).body.data.serviceTier;
const capacityOf = async (id: string) =>
  (await p.gateway.ops('GET', `/organizations/${id}/underwriting`)).body.data.capacity?.amount ?? null;
const TIER_2 = { serviceTier: 'DETERMINATION_AND_SETTLEMENT' };
/** A 202 body as the gated route's contract declares it: the envelope, and data its schema parses unchanged. */
const expectContract202 = (
  action: ApprovalAction,
  answer: { status: number; body: Record<string, unknown> },
) => {
  const spec = FOUR_EYES_ROUTES[action].responses[202] as DataResponse;
  expect([answer.status, Object.keys(answer.body).sort()]).toEqual([202, ['data', 'success']]);
  expect(answer.body.success).toBe(true);
  expect(spec.data.parse(answer.body.data)).toEqual(answer.body.data);
};
const approvalsCount = async () => (await p.gateway.ops('GET', '/approvals?limit=1')).body.pagination.total;

describe('four eyes on a service-tier change', () => {
  it('waits for another underwriter, who carries it out once; the trail names both', async () => {
    const org = await p.gateway.register();
    const asked = await as(first)('POST', `/organizations/${org.id}/service-tier`, TIER_2);
    expectContract202('opsSetServiceTier', asked);
    const approval = asked.body.data.approval;
    expect(approval).toMatchObject({
      status: 'PENDING',
      action: 'opsSetServiceTier',
      path: `/ops/organizations/${org.id}/service-tier`,
      organizationId: org.id,
      request: TIER_2,
      requestedBy: { id: first.id, email: first.email, role: 'UNDERWRITER' },
    });
    expect(await tierOf(org.id)).toBe('DETERMINATION');

    const approve = (who: SignedInOperator) => as(who)('POST', `/approvals/${approval.id}/approve`);
    const refusals = await Promise.all([approve(first), approve(finance), approve(support)]);
    expect(refusals.map((r) => [r.status, r.body.error.message])).toEqual([
      [403, 'You asked for this action: another operator must approve it (four eyes)'],
      [
        403,
        'Your role FINANCE lacks the capability ops.service-tier:write this action needs, so it cannot decide it',
      ],
      [
        403,
        'Your role SUPPORT lacks the capability ops.service-tier:write this action needs, so it cannot decide it',
      ],
    ]);
    expect(await tierOf(org.id)).toBe('DETERMINATION');

    const approved = await approve(second);
    expect(approved.status).toBe(200);
    expect(approved.body.data.approval).toMatchObject({
      status: 'EXECUTED',
      decidedBy: { id: second.id, email: second.email, role: 'UNDERWRITER' },
    });
    expect(approved.body.data.result).toMatchObject({
      id: org.id,
      serviceTier: 'DETERMINATION_AND_SETTLEMENT',
    });
    expect(await tierOf(org.id)).toBe('DETERMINATION_AND_SETTLEMENT');
    const again = await approve(admin);
    expect([again.status, again.body.error.code]).toEqual([409, 'CONFLICT']);

    const trail = (await p.gateway.ops('GET', `/audit?organizationId=${org.id}&action=opsSetServiceTier`))
      .body.data;
    expect(
      trail.map(
        (e: { status: number; actorEmail: string; approval: { requestedBy: { email: string } } | null }) => [
          e.status,
          e.actorEmail,
          e.approval?.requestedBy.email ?? null,
        ],
      ),
    ).toEqual([
      [200, second.email, first.email],
      [202, first.email, null],
    ]);
    const decisions = (await p.gateway.ops('GET', `/audit?action=opsApproveApproval&actor=${second.email}`))
      .body.data;
    expect(decisions.map((e: { targetId: string }) => e.targetId)).toContain(approval.id);
    // The requester's own trail holds the action they asked for and another carried out.
    const requesters = (await p.gateway.ops('GET', `/audit?actor=${first.email}&organizationId=${org.id}`))
      .body.data;
    expect(requesters.map((e: { status: number }) => e.status)).toEqual([200, 202]);
  });

  it('asks a second operator for a sandbox organization’s Tier 2 as for a live one', async () => {
    const sandbox = await p.gateway.register({ environment: 'sandbox' });
    const asked = await as(first)('POST', `/organizations/${sandbox.id}/service-tier`, TIER_2);
    expect(asked.status).toBe(202);
    expect(await tierOf(sandbox.id)).toBe('DETERMINATION');
    const approved = await as(second)('POST', `/approvals/${asked.body.data.approval.id}/approve`);
    expect(approved.status).toBe(200);
    expect(await tierOf(sandbox.id)).toBe('DETERMINATION_AND_SETTLEMENT');
  });

  it('carries it out once when two operators approve at the same moment', async () => {
    const org = await p.gateway.register();
    const asked = await as(first)('POST', `/organizations/${org.id}/service-tier`, TIER_2);
    const id = asked.body.data.approval.id;
    const answers = await Promise.all(
      [second, admin].map((who) => as(who)('POST', `/approvals/${id}/approve`)),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const executed = (
      await p.gateway.ops('GET', `/audit?organizationId=${org.id}&action=opsSetServiceTier`)
    ).body.data.filter((e: { approval: unknown }) => e.approval !== null);
    expect(executed).toHaveLength(1);
  });

  it('sends what needs no second operator straight to the route: the current tier, a tier the market cannot have, an unknown organization, bad input', async () => {
    const before = await approvalsCount();
    const org = await p.gateway.register();
    const ghana = await p.gateway.register({ countryCode: 'GH' });
    const same = await as(first)('POST', `/organizations/${org.id}/service-tier`, {
      serviceTier: 'DETERMINATION',
    });
    const market = await as(first)('POST', `/organizations/${ghana.id}/service-tier`, TIER_2);
    const unknown = await as(first)('POST', `/organizations/${randomUUID()}/service-tier`, TIER_2);
    const bad = await as(first)('POST', `/organizations/${org.id}/service-tier`, { serviceTier: 'GOLD' });
    const extra = await as(first)('POST', `/organizations/${org.id}/service-tier`, {
      ...TIER_2,
      urgent: true,
    });
    expect([same, market, unknown, bad, extra].map((r) => [r.status, r.body.error?.code ?? null])).toEqual([
      [200, null],
      [400, 'INVALID_INPUT'],
      [404, 'NOT_FOUND'],
      [400, 'INVALID_INPUT'],
      [400, 'INVALID_INPUT'],
    ]);
    expect(await approvalsCount()).toBe(before);
  });

  it('lets the break-glass token act at once (audited as break-glass), but never approve', async () => {
    const org = await p.gateway.register();
    const now = await p.gateway.ops('POST', `/organizations/${org.id}/service-tier`, { body: TIER_2 });
    expect(now.status).toBe(200);
    expect(await tierOf(org.id)).toBe('DETERMINATION_AND_SETTLEMENT');
    const [entry] = (await p.gateway.ops('GET', `/audit?organizationId=${org.id}&action=opsSetServiceTier`))
      .body.data;
    expect([entry.actorKind, entry.status]).toEqual(['break-glass', 200]);

    const other = await p.gateway.register();
    const asked = await as(first)('POST', `/organizations/${other.id}/service-tier`, TIER_2);
    const glass = await p.gateway.ops('POST', `/approvals/${asked.body.data.approval.id}/approve`);
    expect([glass.status, glass.body.error.message]).toEqual([
      403,
      'Approvals are decided by a signed-in operator, not a machine client or the break-glass token',
    ]);
  });

  it('lets the requester withdraw, after which no one can approve it; lists by status', async () => {
    const org = await p.gateway.register();
    const asked = await as(first)('POST', `/organizations/${org.id}/service-tier`, TIER_2);
    const id = asked.body.data.approval.id;
    const withdrawn = await as(first)('POST', `/approvals/${id}/reject`, { reason: 'wrong organization' });
    expect(withdrawn.body.data).toMatchObject({ status: 'REJECTED', reason: 'wrong organization' });
    const late = await as(second)('POST', `/approvals/${id}/approve`);
    expect([late.status, late.body.error.code]).toEqual([409, 'CONFLICT']);
    expect(await tierOf(org.id)).toBe('DETERMINATION');
    const rejected = (await as(support)('GET', '/approvals?status=REJECTED&action=opsSetServiceTier')).body
      .data;
    expect(rejected.map((a: { id: string }) => a.id)).toContain(id);
    const read = await as(support)('GET', `/approvals/${id}`);
    expect(read.body.data).toMatchObject({ id, status: 'REJECTED', decidedBy: { id: first.id } });
  });
});

describe('four eyes on capacity', () => {
  it('waits for a second underwriter on an increase above the threshold; records one within it, or a decrease, at once', async () => {
    const org = await p.gateway.register();
    const capacity = (amount: number) => ({
      amount,
      currency: 'KES',
      solvencyAttestedUntil: '2027-06-30T00:00:00Z',
    });
    const small = await as(first)('POST', `/organizations/${org.id}/capacity`, capacity(1_000_000));
    expect([small.status, small.body.data.amount]).toEqual([200, '1000000.00']);

    const big = await as(first)('POST', `/organizations/${org.id}/capacity`, capacity(2_000_000.01));
    expect([big.status, big.body.data.approval?.action]).toEqual([202, 'opsRecordCapacity']);
    expectContract202('opsRecordCapacity', big);
    expect(await capacityOf(org.id)).toBe('1000000.00');
    const approved = await as(second)('POST', `/approvals/${big.body.data.approval.id}/approve`);
    expect([approved.status, approved.body.data.result.amount]).toEqual([200, '2000000.01']);
    expect(await capacityOf(org.id)).toBe('2000000.01');

    const lower = await as(first)('POST', `/organizations/${org.id}/capacity`, capacity(500_000));
    expect([lower.status, lower.body.data.amount]).toEqual([200, '500000.00']);
  });
});
