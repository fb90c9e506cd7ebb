import { randomUUID } from 'node:crypto';
import { AppError } from '@parametric/http';
import type { OpsPolicy } from '@parametric/policy-client';
import { initiatePremium } from '../../src/premiums/domain';
import type { PremiumProvider } from '../../src/premiums/provider';
import type { TenantPayments } from '../../src/repositories';

// The checks of `POST /payments/initiate` (docs/payments.md, "Premium collection"), in their
// order, on the domain function: each one refuses before anything is written or any prompt is
// sent. The store and the provider here record any use, so "nothing written, no one prompted" is
// what they saw. The route, the policy look-up over HTTP and M-Pesa are services/payments/test/premiums.test.ts.

const ORG = randomUUID();
const PHONE = '+254711000001';

/** A Tier 2 KE policy of ORG, PENDING and unpaid, with a premium of 2,500.00 KES. */
function policy(overrides: Partial<OpsPolicy> = {}): OpsPolicy {
  return {
    id: randomUUID(),
    organizationId: ORG,
    policyNumber: 'KE-202611-7K3Q9X',
    status: 'PENDING',
    premiumPaid: false,
    settlementMode: 'DETERMINATION_AND_SETTLEMENT',
    currency: 'KES',
    exponent: 2,
    premiumMinor: '250000',
    ...overrides,
  } as OpsPolicy;
}

/** The organization's payments store, which none of these checks may use. */
function untouchedStore(organizationId: string) {
  const used: string[] = [];
  const tenant = new Proxy({ organizationId } as Record<PropertyKey, unknown>, {
    get(target, key) {
      if (key === 'organizationId') return target.organizationId;
      used.push(String(key));
      throw new Error(`the payments store was used (${String(key)}) before the checks passed`);
    },
  }) as unknown as TenantPayments;
  return { tenant, used };
}

/** Asks `initiatePremium` for `p` in `market`, answering what it threw, what it stored, whom it prompted. */
async function initiate(
  p: OpsPolicy | null,
  body: { amount: number; reference?: string; phoneNumber?: string },
  {
    market = 'KE',
    organizationId = ORG,
    environment = 'live' as 'live' | 'sandbox',
    sandboxDaraja = true,
  } = {},
) {
  const store = untouchedStore(organizationId);
  const prompts: unknown[] = [];
  const provider: PremiumProvider = {
    stkPush: async (i) => {
      prompts.push(i);
      throw new Error('no prompt may be sent');
    },
    stkQuery: async () => {
      throw new Error('no query may be sent');
    },
  };
  const asked: unknown[] = [];
  let refusal: { code: string; message: string; details?: unknown } | undefined;
  try {
    await initiatePremium(
      store.tenant,
      { market, environment },
      {
        reference: body.reference ?? p?.id ?? randomUUID(),
        amount: body.amount,
        phoneNumber: body.phoneNumber ?? PHONE,
      },
      {
        findPolicy: async (reference) => {
          asked.push(reference);
          return p;
        },
        providers: { live: provider, ...(sandboxDaraja ? { sandbox: provider } : {}) },
        callbackUrl: 'https://cb.example/stk',
        now: new Date('2026-11-22T10:00:00.000Z'),
      },
    );
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    refusal = { code: err.code, message: err.message, details: err.details };
  }
  return { refusal, stored: store.used, prompts, asked };
}

describe('initiatePremium refuses, writing nothing and prompting no one', () => {
  it('an unknown policy and another organization’s alike: 404', async () => {
    const reference = randomUUID();
    const unknown = await initiate(null, { amount: 2500, reference });
    expect(unknown.asked).toEqual([{ policyId: reference }]);
    const theirs = await initiate(policy({ organizationId: randomUUID() }), { amount: 2500 });
    expect(unknown.refusal).toEqual({ code: 'NOT_FOUND', message: 'Policy not found', details: undefined });
    expect(theirs.refusal).toEqual(unknown.refusal);
    for (const r of [unknown, theirs]) expect([r.stored, r.prompts]).toEqual([[], []]);
  });

  it('a sandbox organization’s prompt to any number but a simulator test number: 400 on phoneNumber', async () => {
    const real = { amount: 2500, phoneNumber: '+254712345678' };
    const bySandboxCaller = await initiate(policy(), real, { environment: 'sandbox' });
    const ofSandboxPolicy = await initiate(policy({ environment: 'sandbox' }), real);
    for (const r of [bySandboxCaller, ofSandboxPolicy]) {
      expect(r.refusal?.code).toBe('INVALID_INPUT');
      expect(r.refusal?.details).toEqual([
        { field: 'phoneNumber', message: expect.stringContaining('+254711000001') },
      ]);
      expect([r.stored, r.prompts]).toEqual([[], []]);
    }
    // A live organization's passes every check: the first write is reached.
    await expect(initiate(policy(), real)).rejects.toThrow(/the payments store was used/);
  });

  it('a sandbox organization where the platform has no sandbox Daraja: 403 TIER_NOT_ENTITLED', async () => {
    const r = await initiate(policy({ environment: 'sandbox' }), { amount: 2500 }, { sandboxDaraja: false });
    expect(r.refusal?.code).toBe('TIER_NOT_ENTITLED');
    expect(r.refusal?.message).toMatch(/no sandbox M-Pesa configuration/);
    expect([r.stored, r.prompts]).toEqual([[], []]);
  });

  it('a Tier 1 policy: 403 TIER_NOT_ENTITLED', async () => {
    const r = await initiate(policy({ settlementMode: 'DETERMINATION' }), { amount: 2500 });
    expect(r.refusal?.code).toBe('TIER_NOT_ENTITLED');
    expect(r.refusal?.message).toMatch(/Tier 1, DETERMINATION/);
    expect([r.stored, r.prompts]).toEqual([[], []]);
  });

  it('a market without mobile money (GH, a Tier 2 organization from before that rule): 400 on reference', async () => {
    const r = await initiate(
      policy({ currency: 'GHS', policyNumber: 'GH-202611-7K3Q9X' }),
      { amount: 2500 },
      {
        market: 'GH',
      },
    );
    expect(r.refusal?.code).toBe('INVALID_INPUT');
    expect(r.refusal?.message).toMatch(/not available in market GH/);
    expect(r.refusal?.details).toEqual([
      { field: 'reference', message: 'the policy is in GHS; premiums are collected in KE (KES) only' },
    ]);
    expect([r.stored, r.prompts]).toEqual([[], []]);
  });

  it('a policy in another currency than its market’s mobile money: 400 on reference', async () => {
    const r = await initiate(policy({ currency: 'USD' }), { amount: 2500 });
    expect(r.refusal?.details).toEqual([
      { field: 'reference', message: 'the policy is in USD; premiums are collected in KE (KES) only' },
    ]);
    expect([r.stored, r.prompts]).toEqual([[], []]);
  });

  it.each([
    ['already paid', { premiumPaid: true }, 'The policy is already paid: no premium is due'],
    ['ACTIVE', { status: 'ACTIVE' }, 'The policy is ACTIVE: no premium is due'],
    ['EXPIRED', { status: 'EXPIRED' }, 'The policy is EXPIRED: no premium is due'],
  ] as const)('a policy %s: 409 CONFLICT', async (_what, overrides, message) => {
    const r = await initiate(policy(overrides as Partial<OpsPolicy>), { amount: 2500 });
    expect(r.refusal).toEqual({ code: 'CONFLICT', message, details: undefined });
    expect([r.stored, r.prompts]).toEqual([[], []]);
  });

  it('an amount that is not the premium: 400 naming amount and the premium', async () => {
    for (const amount of [2501, 2499.99, 0.01]) {
      const r = await initiate(policy(), { amount });
      expect(r.refusal).toEqual({
        code: 'INVALID_INPUT',
        message: 'The amount is not the premium',
        details: [{ field: 'amount', message: 'must be the policy premium, 2500.00 KES' }],
      });
      expect([r.stored, r.prompts]).toEqual([[], []]);
    }
  });

  it('an amount with more decimals than KES has (2500.001): 400 naming amount, never rounded to the premium', async () => {
    const r = await initiate(policy(), { amount: 2500.001 });
    expect(r.refusal?.code).toBe('INVALID_INPUT');
    expect(r.refusal?.details).toEqual([{ field: 'amount', message: expect.any(String) }]);
    expect([r.stored, r.prompts]).toEqual([[], []]);
  });

  it('a premium with cents, which M-Pesa cannot collect: 400 naming amount', async () => {
    const r = await initiate(policy({ premiumMinor: '250050' }), { amount: 2500.5 });
    expect(r.refusal).toEqual({
      code: 'INVALID_INPUT',
      message: 'M-Pesa collects whole shillings only, and this premium has cents',
      details: [{ field: 'amount', message: '2500.50 KES cannot be collected by M-Pesa' }],
    });
    expect([r.stored, r.prompts]).toEqual([[], []]);
  });
});

describe('the order of the checks (docs/payments.md)', () => {
  it('ownership before the tier, the tier before the market, the market before the status, the status before the amount', async () => {
    const stranger = randomUUID();
    const codeOf = async (p: OpsPolicy, amount: number, market = 'KE') =>
      (await initiate(p, { amount }, { market })).refusal?.code;
    // Each policy fails every check from the one named on: the first decides.
    expect(
      await codeOf(
        policy({ organizationId: stranger, settlementMode: 'DETERMINATION', premiumPaid: true }),
        1,
        'GH',
      ),
    ).toBe('NOT_FOUND');
    expect(await codeOf(policy({ settlementMode: 'DETERMINATION', premiumPaid: true }), 1, 'GH')).toBe(
      'TIER_NOT_ENTITLED',
    );
    expect(await codeOf(policy({ premiumPaid: true }), 1, 'GH')).toBe('INVALID_INPUT');
    expect(await codeOf(policy({ premiumPaid: true }), 1)).toBe('CONFLICT');
    expect(await codeOf(policy(), 1)).toBe('INVALID_INPUT');
  });
});
