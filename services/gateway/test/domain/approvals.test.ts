import { AppError, type OpsCapability } from '@parametric/http';
import fc from 'fast-check';
import {
  type ActionOutcome,
  capacityIncreaseNeedsApproval,
  createApprovals,
  type Decider,
} from '../../src/approvals/domain';
import type { ApprovalRecord } from '../../src/approvals/store';
import { memoryApprovalStore } from './memory-approval-store';

/**
 * Four eyes (docs/ops.md, "Four eyes"): the rules of approvals, over the store's in-memory twin.
 * The platform test (services/gateway/test/ops-approvals.test.ts) proves the wiring.
 */

const HOUR = 3_600_000;

const operator = (id: string, capabilities: OpsCapability[], role = 'FINANCE'): Decider => ({
  kind: 'operator',
  id,
  email: `${id}@ops.example`,
  role,
  capabilities,
});
const amina = operator('amina', ['ops.payout:write', 'ops.session:read']);
const baraka = operator('baraka', ['ops.payout:write', 'ops.session:read']);
const chebet = operator('chebet', ['ops.payout:write', 'ops.session:read']);
const underwriter = operator('uwase', ['ops.underwriting:write', 'ops.session:read'], 'UNDERWRITER');
const breakGlass: Decider = {
  ...operator('ops-token:abc', ['ops.payout:write']),
  kind: 'break-glass',
  email: null,
};
const client: Decider = { ...operator('client-1', ['ops.payout:write']), kind: 'client', email: null };

function harness(
  outcome: () => Promise<ActionOutcome> = async () => ({
    kind: 'done',
    status: 201,
    data: { payoutId: 'p-1' },
  }),
) {
  let now = new Date('2026-11-28T10:00:00Z');
  const store = memoryApprovalStore();
  const executions: { approval: ApprovalRecord; approver: Decider }[] = [];
  const audited: { approval: ApprovalRecord; outcome: ActionOutcome }[] = [];
  const approvals = createApprovals({
    store,
    clock: () => now,
    ttlMs: 24 * HOUR,
    leaseMs: 60_000,
    execute: async (approval, approver) => {
      executions.push({ approval, approver });
      return outcome();
    },
    audited: async (approval, result) => {
      audited.push({ approval, outcome: result });
    },
  });
  const ask = (by: Decider = amina) =>
    approvals.request(by, {
      action: 'opsOriginatePayout',
      method: 'POST',
      path: '/ops/payouts',
      organizationId: null,
      params: {},
      request: { determinationId: 'd-1' },
    });
  return {
    approvals,
    store,
    executions,
    audited,
    ask,
    advance: (ms: number) => {
      now = new Date(now.getTime() + ms);
    },
  };
}

const refusal = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return { status: err.status, code: err.code, message: err.message };
    throw err;
  }
  throw new Error('expected a refusal');
};

describe('four eyes: asking', () => {
  it('records a PENDING request that expires after the TTL and carries nothing out', async () => {
    const h = harness();
    const approval = await h.ask();
    expect(approval).toMatchObject({
      status: 'PENDING',
      action: 'opsOriginatePayout',
      requestedBy: { id: 'amina', email: 'amina@ops.example', role: 'FINANCE' },
      requestedAt: '2026-11-28T10:00:00.000Z',
      expiresAt: '2026-11-29T10:00:00.000Z',
      decidedBy: null,
    });
    expect(h.executions).toEqual([]);
    expect((await h.approvals.list({ page: 1, limit: 10, status: 'PENDING' })).total).toBe(1);
  });
});

describe('four eyes: approving', () => {
  it('refuses the requester, a role without the action’s capability, a machine client and break-glass', async () => {
    const h = harness();
    const { id } = await h.ask();
    expect(await refusal(h.approvals.approve(amina, id, 'r'))).toMatchObject({
      status: 403,
      message: 'You asked for this action: another operator must approve it (four eyes)',
    });
    expect(await refusal(h.approvals.approve(underwriter, id, 'r'))).toMatchObject({
      status: 403,
      message:
        'Your role UNDERWRITER lacks the capability ops.payout:write this action needs, so it cannot decide it',
    });
    for (const who of [client, breakGlass]) {
      expect(await refusal(h.approvals.approve(who, id, 'r'))).toMatchObject({ status: 403 });
    }
    expect(h.executions).toEqual([]);
    expect((await h.approvals.get(id)).status).toBe('PENDING');
  });

  it('carries the action out once, with the approver, audited with both; approving again is 409', async () => {
    const h = harness();
    const { id } = await h.ask();
    const done = await h.approvals.approve(baraka, id, 'req-1');
    expect(done).toMatchObject({
      approval: {
        status: 'EXECUTED',
        requestedBy: { id: 'amina' },
        decidedBy: { id: 'baraka', email: 'baraka@ops.example' },
        result: { payoutId: 'p-1' },
      },
      result: { payoutId: 'p-1' },
    });
    expect(h.executions.map((e) => e.approver.id)).toEqual(['baraka']);
    expect(h.audited.map((a) => [a.approval.requestedBy.id, a.approval.decidedBy?.id])).toEqual([
      ['amina', 'baraka'],
    ]);
    expect(await refusal(h.approvals.approve(chebet, id, 'req-2'))).toMatchObject({
      status: 409,
      message: `Approval ${id} cannot be decided: it was approved by baraka@ops.example and carried out`,
    });
    expect(h.executions).toHaveLength(1);
  });

  it('refuses approving an expired request (409) and lists it as EXPIRED', async () => {
    const h = harness();
    const { id } = await h.ask();
    h.advance(24 * HOUR);
    expect(await refusal(h.approvals.approve(baraka, id, 'r'))).toMatchObject({
      status: 409,
      message: `Approval ${id} cannot be decided: it expired at 2026-11-29T10:00:00.000Z; ask for the action again`,
    });
    expect(h.executions).toEqual([]);
    const listed = await h.approvals.list({ page: 1, limit: 10, status: 'EXPIRED' });
    expect(listed.items.map((a) => [a.id, a.status])).toEqual([[id, 'EXPIRED']]);
    expect((await h.approvals.list({ page: 1, limit: 10, status: 'PENDING' })).total).toBe(0);
  });

  it('settles a refused action FAILED and answers with its refusal; it cannot be approved again', async () => {
    const h = harness(async () => ({
      kind: 'refused',
      status: 400,
      code: 'INVALID_INPUT',
      message: 'owes nothing',
    }));
    const { id } = await h.ask();
    expect(await refusal(h.approvals.approve(baraka, id, 'r'))).toEqual({
      status: 400,
      code: 'INVALID_INPUT',
      message: 'The approved action was refused: owes nothing',
    });
    expect(await h.approvals.get(id)).toMatchObject({
      status: 'FAILED',
      error: { status: 400, code: 'INVALID_INPUT', message: 'owes nothing' },
    });
    expect(h.audited).toHaveLength(1);
    expect((await refusal(h.approvals.approve(chebet, id, 'r'))).status).toBe(409);
  });

  it('leaves it PENDING when the service cannot be reached (503), so it can be approved again', async () => {
    let reachable = false;
    const h = harness(async () =>
      reachable
        ? { kind: 'done', status: 201, data: { ok: true } }
        : { kind: 'unavailable', message: 'payments down' },
    );
    const { id } = await h.ask();
    expect(await refusal(h.approvals.approve(baraka, id, 'r'))).toMatchObject({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
    });
    expect(await h.approvals.get(id)).toMatchObject({ status: 'PENDING', decidedBy: null });
    expect(h.audited).toEqual([]);
    reachable = true;
    expect((await h.approvals.approve(chebet, id, 'r')).approval.status).toBe('EXECUTED');
  });

  it('releases its claim when carrying out throws, and the error goes on', async () => {
    const h = harness(async () => {
      throw new Error('boom');
    });
    const { id } = await h.ask();
    await expect(h.approvals.approve(baraka, id, 'r')).rejects.toThrow('boom');
    expect((await h.approvals.get(id)).status).toBe('PENDING');
  });

  it('lets another approval retake a claim whose lease ran out (its process lost), never a live one', async () => {
    const waiting: (() => void)[] = [];
    const h = harness(
      () =>
        new Promise<ActionOutcome>((resolve) => {
          waiting.push(() => resolve({ kind: 'done', status: 200, data: {} }));
        }),
    );
    const { id } = await h.ask();
    const first = h.approvals.approve(baraka, id, 'r1');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await refusal(h.approvals.approve(chebet, id, 'r2'))).message).toContain(
      'another approval is carrying it out',
    );
    h.advance(60_000);
    const second = h.approvals.approve(chebet, id, 'r3');
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const release of waiting) release();
    await Promise.all([first, second]);
    expect(h.executions.map((e) => e.approver.id)).toEqual(['baraka', 'chebet']);
    expect(await h.approvals.get(id)).toMatchObject({ status: 'EXECUTED', decidedBy: { id: 'chebet' } });
  });
});

describe('four eyes: rejecting', () => {
  it('lets the requester withdraw and another operator with the capability reject; nothing is carried out', async () => {
    const h = harness();
    const withdrawn = await h.ask();
    expect(await h.approvals.reject(amina, withdrawn.id, null)).toMatchObject({
      status: 'REJECTED',
      decidedBy: { id: 'amina' },
    });
    const other = await h.ask();
    expect((await refusal(h.approvals.reject(underwriter, other.id, 'no'))).status).toBe(403);
    expect(await h.approvals.reject(baraka, other.id, 'not this week')).toMatchObject({
      status: 'REJECTED',
      reason: 'not this week',
      decidedBy: { id: 'baraka' },
    });
    expect(await refusal(h.approvals.approve(chebet, other.id, 'r'))).toMatchObject({
      status: 409,
      message: `Approval ${other.id} cannot be decided: it was rejected by baraka@ops.example`,
    });
    expect(h.executions).toEqual([]);
  });
});

describe('four eyes: the invariant under racing decisions', () => {
  const deciders = [amina, baraka, chebet, underwriter, client, breakGlass];
  it('carries an action out at most once, only for someone else with the capability, never after a rejection', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(amina, baraka, chebet),
        fc.array(fc.record({ who: fc.constantFrom(...deciders), approve: fc.boolean() }), {
          minLength: 1,
          maxLength: 8,
        }),
        async (requester, decisions) => {
          const h = harness();
          const { id } = await h.ask(requester);
          const answers = await Promise.allSettled(
            decisions.map((d) =>
              d.approve ? h.approvals.approve(d.who, id, 'r') : h.approvals.reject(d.who, id, null),
            ),
          );
          expect(h.executions.length).toBeLessThanOrEqual(1);
          for (const { approver } of h.executions) {
            expect(approver.kind).toBe('operator');
            expect(approver.id).not.toBe(requester.id);
            expect(approver.capabilities).toContain('ops.payout:write');
          }
          const final = await h.approvals.get(id);
          expect(final.status === 'EXECUTED').toBe(h.executions.length === 1);
          expect(
            answers.filter((a) => a.status === 'fulfilled' && 'approval' in (a.value as object)),
          ).toHaveLength(h.executions.length);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('four eyes: which capacity increases need a second operator', () => {
  const k = (amount: number) => ({ amount, currency: 'KES' });
  it.each([
    ['no capacity yet, an increase above the threshold', null, k(1_000_000.01), 1_000_000n, true],
    ['no capacity yet, exactly the threshold', null, k(1_000_000), 1_000_000n, false],
    [
      'an increase within the threshold',
      { amount: '5000000.00', currency: 'KES' },
      k(5_999_999.99),
      1_000_000n,
      false,
    ],
    [
      'an increase one cent above it',
      { amount: '5000000.00', currency: 'KES' },
      k(6_000_000.01),
      1_000_000n,
      true,
    ],
    ['a decrease', { amount: '5000000.00', currency: 'KES' }, k(10), 0n, false],
    ['the same amount, threshold 0', { amount: '5000000.00', currency: 'KES' }, k(5_000_000), 0n, false],
    ['any increase, threshold 0', { amount: '5000000.00', currency: 'KES' }, k(5_000_000.01), 0n, true],
    [
      'capacity in another currency counts as none',
      { amount: '9000000.00', currency: 'GHS' },
      k(2_000_000),
      1_000_000n,
      true,
    ],
  ])('%s', (_name, current, requested, threshold, needs) => {
    expect(capacityIncreaseNeedsApproval(current, requested, threshold)).toBe(needs);
  });
});
