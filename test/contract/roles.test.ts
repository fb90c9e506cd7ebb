import { randomUUID } from 'node:crypto';
import { PARTNER_ROUTES } from '@parametric/contracts';
import {
  type Capability,
  ROLE_CAPABILITIES,
  ROLES,
  type Role,
  type RouteContract,
  roleHas,
} from '@parametric/http';
import { eventually } from '@parametric/test-harness';
import {
  activateAsPaid,
  assessment,
  type DeterminationsPlatform,
  startDeterminationsPlatform,
} from '../../services/determinations/test/support';
import {
  type CallOptions,
  type Reply,
  type SignedInUser,
  signInAs,
} from '../../services/gateway/test/support';
import { startPaymentsStack } from '../../services/payments/test/support';
import {
  cropPurchase,
  farmerBody,
  herdBody,
  plotBody,
  type SellableOrg,
  sellableOrg,
} from '../../services/policy/test/support';
import { BODY_REFERENCES, ID_PROBES, type IdProbe, type Ids, unknownIds } from './id-probes';

/**
 * Roles through the gateway (issue 12; docs/api.md, "Capabilities"), the whole platform running
 * behind it, over real sockets: what a partner relies on when its people sign in to the dashboard.
 *
 * 1. The role table, generated from the contracts: every partner route × the API key and a
 *    signed-in user of each role. A role without the route's capability gets exactly the
 *    gateway's 403 naming it; everyone else gets the route's real success, with real ids.
 * 2. A few real flows per role.
 * 3. A user token of one organization with another's ids: exactly an unknown id; lists show
 *    only the caller's own organization.
 * 4. A path that is no partner route is 404 to a narrower role.
 */

// ---------------------------------------------------------------------------------------------
// Who calls, and what the gateway answers when a role lacks a capability
// ---------------------------------------------------------------------------------------------

/** The API key acts as ORG_ADMIN; the four roles are dashboard users signed in for real. */
type Caller = 'API key' | Role;
const CALLERS: readonly Caller[] = ['API key', ...ROLES];

const partnerRoutes = (Object.values(PARTNER_ROUTES).flat() as RouteContract[]).filter(
  (route) => route.auth === 'partner',
);

const mayCall = (caller: Caller, capability: Capability) =>
  caller === 'API key' || roleHas(caller, capability);

/** The refusal a partner branches on: status, code, and a message naming role and capability. */
const refusal = (role: Role, capability: Capability) => ({
  status: 403,
  code: 'FORBIDDEN',
  message: `Your role ${role} lacks the capability ${capability} this endpoint needs`,
});

/** The parts of an answer the refusal is compared on. */
const outcome = (reply: Reply) => ({
  status: reply.status,
  code: reply.body?.error?.code,
  message: reply.body?.error?.message,
});

// ---------------------------------------------------------------------------------------------
// The organizations
// ---------------------------------------------------------------------------------------------

interface Org {
  id: string;
  apiKey: string;
  /** Signed-in dashboard users, one per role (empty for organizations only probed). */
  users: Partial<Record<Role, SignedInUser>>;
}

/** A Tier 1 (DETERMINATION) organization with one of every Tier 1 thing. */
interface CropOrg extends Org, SellableOrg {
  herdId: string;
  /** ACTIVE, with a triggered determination. */
  policyId: string;
  determinationId: string;
  deliveryId: string;
  /** A user still INVITED (never signed in): the one whose id the probes read. */
  userId: string;
}

/** A Tier 2 (DETERMINATION_AND_SETTLEMENT) organization with a payment, a quote and a payout. */
interface SettleOrg extends Org, SellableOrg {
  paymentId: string;
  quoteId: string;
  /** FAILED: its farmer's number is one M-Pesa reports as unregistered (2040). */
  payoutId: string;
}

/** The simulator's STK number that never calls back: the prompt stays pending, nothing else runs. */
const SILENT_PHONE = '+254711000090';
/** The simulator's B2C number that fails at once (2040, recipient not registered). */
const UNREGISTERED_PHONE = '+254722000021';

let p: DeterminationsPlatform;
/** The organization the table and the flows use for everything but payments. */
let crop: CropOrg;
/** The organization the table uses for payments and payouts (Tier 2 only). */
let settle: SettleOrg;
/** Another Tier 1 organization, never signed in to: its ids are the foreign ones in part 3. */
let other: CropOrg;
/** A sandbox organization (docs/api.md, "Sandbox") with an ACTIVE policy: its test determinations. */
let sandbox: Org & { policyId: string };

const api = (method: string, path: string, options?: CallOptions) => p.gateway.api(method, path, options);

/** `data` of an answer that must have this status (setup steps: say what failed, and why). */
async function expectData(reply: Promise<Reply>, status: number, what: string) {
  const answered = await reply;
  if (answered.status !== status) {
    throw new Error(`${what}: ${answered.status} ${JSON.stringify(answered.body)}`);
  }
  return answered.body.data;
}

async function ops(path: string, body: unknown) {
  const reply = await p.gateway.ops('POST', path, { body });
  if (reply.status >= 300) throw new Error(`ops ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.data;
}

async function signInEveryRole(apiKey: string): Promise<Record<Role, SignedInUser>> {
  const users = await Promise.all(ROLES.map((role) => signInAs(p.gateway, apiKey, role)));
  return Object.fromEntries(ROLES.map((role, i) => [role, users[i]])) as Record<Role, SignedInUser>;
}

/** Invites a viewer (left INVITED); its id. Users the table changes or deactivates come from here. */
async function invitedUser(apiKey: string): Promise<string> {
  const data = await expectData(
    api('POST', '/organizations/me/users', {
      key: apiKey,
      body: { email: `invited-${randomUUID()}@example.org`, name: 'Invited Viewer', role: 'ORG_VIEWER' },
    }),
    201,
    'invitation',
  );
  return data.user.id;
}

/** A PENDING crop policy for the organization's farmer and plot. */
async function pendingPolicy(org: SellableOrg): Promise<{ id: string; premium: number }> {
  const data = await expectData(
    api('POST', '/policies/purchase', { key: org.apiKey, body: cropPurchase(org) }),
    201,
    'purchase',
  );
  return data.policy;
}

/**
 * A Tier 1 organization: farmer, plot, herd, an ACTIVE policy with a determination, its webhook
 * delivery log, an invited user. `connect` points its webhook at the platform's receiver (one
 * organization only: the receiver knows one secret).
 */
async function cropOrg(options: { connect: boolean; signIn: boolean }): Promise<CropOrg> {
  const org = await sellableOrg(p.asPolicyPlatform, { capacity: 100_000_000 });
  if (options.connect) await p.connectWebhook(org.apiKey);
  const herd = await expectData(
    api('POST', '/herds', { key: org.apiKey, body: herdBody(org.farmerId) }),
    201,
    'herd',
  );
  const insured = await pendingPolicy(org);
  await expectData(api('PUT', `/policies/${insured.id}/activate`, { key: org.apiKey }), 200, 'activation');
  const { determination } = await ops('/determinations', assessment({ policyId: insured.id }));
  // The activation's event is in the delivery log (with or without a URL) before anyone reads it.
  const delivery = await eventually(
    async () => {
      const log = await expectData(
        api('GET', '/organizations/me/webhook/deliveries', { key: org.apiKey }),
        200,
        'delivery log',
      );
      const activated = log.deliveries.find((d: { event: string }) => d.event === 'policy.activated');
      expect(activated).toBeDefined();
      return activated;
    },
    { timeout: 20_000, message: 'the policy.activated delivery row' },
  );
  return {
    ...org,
    herdId: herd.id,
    policyId: insured.id,
    determinationId: determination.determinationId,
    deliveryId: delivery.id,
    userId: await invitedUser(org.apiKey),
    users: options.signIn ? await signInEveryRole(org.apiKey) : {},
  };
}

/** Waits until the payout is FAILED again (only a FAILED payout can be retried). */
function payoutFailed(org: { apiKey: string; payoutId: string }) {
  return eventually(
    async () => {
      const read = await api('GET', `/payouts/${org.payoutId}`, { key: org.apiKey });
      expect(read.body.data?.status).toBe('FAILED');
    },
    { timeout: 20_000, message: `payout ${org.payoutId} to be FAILED` },
  );
}

/**
 * A Tier 2 organization: a pending premium prompt, a quote, and a payout that has FAILED (so
 * `retry` really retries), each with its own policy.
 */
async function settleOrg(): Promise<SettleOrg> {
  const org = await sellableOrg(p.asPolicyPlatform, {
    capacity: 100_000_000,
    tier: 'DETERMINATION_AND_SETTLEMENT',
  });
  const prompted = await pendingPolicy(org);
  const payment = await expectData(
    api('POST', '/payments/initiate', {
      key: org.apiKey,
      body: { reference: prompted.id, amount: prompted.premium, phoneNumber: SILENT_PHONE },
    }),
    201,
    'payment',
  );
  const quote = await expectData(
    api('POST', '/payments/quote', {
      key: org.apiKey,
      body: { amount: 1000, fromCurrency: 'KES', toCurrency: 'USDC' },
    }),
    201,
    'quote',
  );
  // The payout goes to the farmer's number, so it needs a farmer whose number M-Pesa refuses.
  const farmer = await expectData(
    api('POST', '/farmers', { key: org.apiKey, body: farmerBody({ phoneNumber: UNREGISTERED_PHONE }) }),
    201,
    'farmer',
  );
  await ops(`/farmers/${farmer.id}/kyc`, { status: 'APPROVED' });
  const plot = await expectData(
    api('POST', '/plots', { key: org.apiKey, body: plotBody(farmer.id) }),
    201,
    'plot',
  );
  // Paid (activated as the payments service does), then a triggered determination on it, whose
  // payout ops originate by hand rather than wait for its job (one payout either way).
  const paidOut = await pendingPolicy({ ...org, farmerId: farmer.id, plotId: plot.id });
  await activateAsPaid(p, org, paidOut.id);
  const owing = await ops('/determinations', assessment({ policyId: paidOut.id }));
  const payout = await ops('/payouts', { determinationId: owing.determination.determinationId });
  await payoutFailed({ apiKey: org.apiKey, payoutId: payout.payoutId });
  return {
    ...org,
    paymentId: payment.transactionId,
    quoteId: quote.quoteId,
    payoutId: payout.payoutId,
    users: await signInEveryRole(org.apiKey),
  };
}

/** A sandbox organization with an ACTIVE crop policy and a user of each role: no ops step at all. */
async function sandboxOrg(): Promise<Org & { policyId: string }> {
  const { id, apiKey } = await p.gateway.register({ environment: 'sandbox' });
  const farmer = await expectData(
    api('POST', '/farmers', { key: apiKey, body: farmerBody() }),
    201,
    'farmer',
  );
  const plot = await expectData(
    api('POST', '/plots', { key: apiKey, body: plotBody(farmer.id) }),
    201,
    'plot',
  );
  const policy = await pendingPolicy({ id, apiKey, farmerId: farmer.id, plotId: plot.id });
  await expectData(api('PUT', `/policies/${policy.id}/activate`, { key: apiKey }), 200, 'activation');
  return { id, apiKey, policyId: policy.id, users: await signInEveryRole(apiKey) };
}

/**
 * A fresh organization for one call that changes its credentials (key rotation, revocation):
 * rotating the key of an organization the other tests use would break them.
 */
async function throwawayOrg(caller: Caller): Promise<Org> {
  const { id, apiKey } = await p.gateway.register();
  const users: Org['users'] =
    caller === 'API key' ? {} : { [caller]: await signInAs(p.gateway, apiKey, caller) };
  return { id, apiKey, users };
}

/** The credentials a caller sends: the organization's key, or its user's access token. */
function credentialsOf(org: Org, caller: Caller): CallOptions {
  if (caller === 'API key') return { key: org.apiKey };
  const user = org.users[caller];
  if (!user) throw new Error(`no signed-in ${caller} in organization ${org.id}`);
  return { token: user.accessToken };
}

beforeAll(async () => {
  p = await startDeterminationsPlatform({}, {}, async ({ policyUrl, determinationsUrl, redisPrefix }) => {
    // Payouts settle in well under a second, so a retried payout is FAILED again quickly.
    const payments = await startPaymentsStack(
      { policyUrl, determinationsUrl, redisPrefix },
      { PAYOUT_RETRY_BASE_SECONDS: '0.05', PAYOUT_STATUS_POLL_MS: '50', PAYOUT_MAX_ATTEMPTS: '3' },
    );
    return {
      gatewayEnv: {
        PAYMENTS_URL: payments.payments.url,
        PAYMENTS_INITIATE_LIMIT_POINTS: '1000',
        // Sign-ins (accepting an invitation, logging in) count per client address, and every
        // request of this file comes from one.
        ANONYMOUS_LIMIT_POINTS: '100000',
      },
      stop: () => payments.stop(),
    };
  });
  [crop, other, settle, sandbox] = await Promise.all([
    cropOrg({ connect: true, signIn: true }),
    cropOrg({ connect: false, signIn: false }),
    settleOrg(),
    sandboxOrg(),
  ]);
}, 120_000);

afterAll(async () => {
  await p?.stop();
});

// ---------------------------------------------------------------------------------------------
// 1. The role table
// ---------------------------------------------------------------------------------------------

/** What one case sends. */
interface Call {
  path: string;
  body?: unknown;
}

interface Probe {
  /**
   * Whose route: `crop` (Tier 1, everything but payments), `settle` (Tier 2: payments and
   * payouts), `sandbox` (test determinations), or `throwaway` (a fresh organization per case:
   * the call changes its credentials).
   */
  org: 'crop' | 'settle' | 'sandbox' | 'throwaway';
  /** The route's real success, which every caller with the capability gets. */
  success: number;
  /**
   * The request, with the organization's own ids. It may first make (with the organization's
   * key) what the call consumes, so each allowed call really succeeds: a PENDING policy to
   * activate, an INVITED user to deactivate, the current settlement report to supersede.
   */
  request(org: Org): Call | Promise<Call>;
  /** Checks after the call: that an allowed call took effect, or a refused one did not. */
  after?(reply: Reply, org: Org, allowed: boolean): Promise<void>;
}

const readProbe = (path: string, org: Probe['org'] = 'crop'): Probe => ({
  org,
  success: 200,
  request: () => ({ path }),
});

/** The key stops working after an allowed rotation or revocation; a refused one leaves it working. */
const keyWorks = async (apiKey: string) => (await api('GET', '/organizations/me', { key: apiKey })).status;

/** One entry per partner route (the first test holds this to the contracts). */
const PROBES: Record<string, Probe> = {
  // The organization and its key (the gateway).
  getOrganization: readProbe('/organizations/me'),
  updateSettings: {
    org: 'crop',
    success: 200,
    request: () => ({ path: '/organizations/me/settings', body: { brandColor: '#1A7F37' } }),
  },
  getApiKey: readProbe('/organizations/me/api-key'),
  rotateApiKey: {
    org: 'throwaway',
    success: 200,
    request: () => ({ path: '/organizations/me/api-key/rotate' }),
    async after(reply, org, allowed) {
      expect(await keyWorks(org.apiKey)).toBe(allowed ? 401 : 200);
      if (allowed) expect(await keyWorks(reply.body.data.apiKey)).toBe(200);
    },
  },
  revokeApiKey: {
    org: 'throwaway',
    success: 200,
    request: () => ({ path: '/organizations/me/api-key/revoke' }),
    async after(_reply, org, allowed) {
      expect(await keyWorks(org.apiKey)).toBe(allowed ? 401 : 200);
    },
  },

  // Dashboard users (the gateway).
  createUser: {
    org: 'crop',
    success: 201,
    request: () => ({
      path: '/organizations/me/users',
      body: { email: `new-${randomUUID()}@example.org`, name: 'New Operator', role: 'ORG_OPERATOR' },
    }),
  },
  listUsers: readProbe('/organizations/me/users'),
  getUser: { org: 'crop', success: 200, request: () => ({ path: `/organizations/me/users/${crop.userId}` }) },
  updateUser: {
    org: 'crop',
    success: 200,
    request: async (org) => ({
      path: `/organizations/me/users/${await invitedUser(org.apiKey)}`,
      body: { role: 'ORG_FINANCE' },
    }),
  },
  deactivateUser: {
    org: 'crop',
    success: 200,
    request: async (org) => ({ path: `/organizations/me/users/${await invitedUser(org.apiKey)}` }),
  },
  reissueInvitation: {
    org: 'crop',
    success: 200,
    request: async (org) => ({ path: `/organizations/me/users/${await invitedUser(org.apiKey)}/invitation` }),
  },
  getSession: readProbe('/auth/session'),

  // Test determinations (the determinations service; sandbox organizations only).
  createSandboxDetermination: {
    org: 'sandbox',
    success: 201,
    request: () => ({
      path: '/sandbox/determinations',
      body: { policyId: sandbox.policyId, triggered: true, damagePercentBp: 1_000 },
    }),
  },

  // Farmers, plots, herds, policies (the policy service).
  registerFarmer: { org: 'crop', success: 201, request: () => ({ path: '/farmers', body: farmerBody() }) },
  bulkImportFarmers: {
    org: 'crop',
    success: 200,
    request: () => ({ path: '/farmers/bulk-import', body: { farmers: [farmerBody()] } }),
  },
  listFarmers: readProbe('/farmers'),
  getFarmer: { org: 'crop', success: 200, request: () => ({ path: `/farmers/${crop.farmerId}` }) },
  listFarmerPlots: {
    org: 'crop',
    success: 200,
    request: () => ({ path: `/farmers/${crop.farmerId}/plots` }),
  },
  listFarmerHerds: {
    org: 'crop',
    success: 200,
    request: () => ({ path: `/farmers/${crop.farmerId}/herds` }),
  },
  registerPlot: {
    org: 'crop',
    success: 201,
    request: () => ({ path: '/plots', body: plotBody(crop.farmerId) }),
  },
  getPlot: { org: 'crop', success: 200, request: () => ({ path: `/plots/${crop.plotId}` }) },
  registerHerd: {
    org: 'crop',
    success: 201,
    request: () => ({ path: '/herds', body: herdBody(crop.farmerId) }),
  },
  getHerd: { org: 'crop', success: 200, request: () => ({ path: `/herds/${crop.herdId}` }) },
  purchasePolicy: {
    org: 'crop',
    success: 201,
    request: () => ({ path: '/policies/purchase', body: cropPurchase(crop) }),
  },
  listPolicies: readProbe('/policies'),
  getPolicy: { org: 'crop', success: 200, request: () => ({ path: `/policies/${crop.policyId}` }) },
  getPolicyStatus: {
    org: 'crop',
    success: 200,
    request: () => ({ path: `/policies/${crop.policyId}/status` }),
  },
  activatePolicy: {
    org: 'crop',
    success: 200,
    request: async () => ({ path: `/policies/${(await pendingPolicy(crop)).id}/activate`, body: {} }),
    async after(reply, _org, allowed) {
      if (allowed) expect(reply.body.data.status).toBe('ACTIVE');
    },
  },

  // Premiums, quotes, payouts (the payments service; Tier 2).
  initiatePayment: {
    org: 'settle',
    success: 201,
    request: async () => {
      const policy = await pendingPolicy(settle);
      return {
        path: '/payments/initiate',
        body: { reference: policy.id, amount: policy.premium, phoneNumber: SILENT_PHONE },
      };
    },
  },
  listPayments: readProbe('/payments', 'settle'),
  getPayment: { org: 'settle', success: 200, request: () => ({ path: `/payments/${settle.paymentId}` }) },
  createQuote: {
    org: 'settle',
    success: 201,
    request: () => ({
      path: '/payments/quote',
      body: { amount: 2500, fromCurrency: 'KES', toCurrency: 'USDC' },
    }),
  },
  getQuote: { org: 'settle', success: 200, request: () => ({ path: `/payments/quotes/${settle.quoteId}` }) },
  listPayouts: readProbe('/payouts', 'settle'),
  getPayout: { org: 'settle', success: 200, request: () => ({ path: `/payouts/${settle.payoutId}` }) },
  retryPayout: {
    org: 'settle',
    success: 200,
    request: async () => {
      // The previous allowed case's retry fails again in the background; wait for that.
      await payoutFailed(settle);
      return { path: `/payouts/${settle.payoutId}/retry` };
    },
  },

  // Determinations and settlement reports (the determinations service).
  listDeterminations: readProbe('/determinations'),
  getDetermination: {
    org: 'crop',
    success: 200,
    request: () => ({ path: `/determinations/${crop.determinationId}` }),
  },
  getDeterminationEvidence: {
    org: 'crop',
    success: 200,
    request: () => ({ path: `/determinations/${crop.determinationId}/evidence` }),
  },
  getSettlementReports: {
    org: 'crop',
    success: 200,
    request: () => ({ path: `/determinations/${crop.determinationId}/settlement-report` }),
  },
  recordSettlementReport: {
    org: 'crop',
    success: 201,
    // Each allowed caller records a new report, correcting whichever is current.
    request: async () => ({
      path: `/determinations/${crop.determinationId}/settlement-report`,
      body: await settlementReport(),
    }),
  },

  // The webhook (the webhooks service).
  setWebhook: {
    org: 'crop',
    success: 200,
    // The URL it already has: the receiver keeps verifying deliveries.
    request: () => ({ path: '/organizations/me/webhook', body: { url: p.receiver.url } }),
  },
  getWebhook: readProbe('/organizations/me/webhook'),
  rotateWebhookSecret: {
    org: 'crop',
    success: 200,
    request: () => ({ path: '/organizations/me/webhook/rotate-secret' }),
    async after(reply, _org, allowed) {
      // The receiver learns the new secret, as a partner would.
      if (allowed) p.receiver.setSecret(reply.body.data.secret);
    },
  },
  listWebhookDeliveries: readProbe('/organizations/me/webhook/deliveries'),
  getWebhookDelivery: {
    org: 'crop',
    success: 200,
    request: () => ({ path: `/organizations/me/webhook/deliveries/${crop.deliveryId}` }),
  },
  retryWebhookDelivery: {
    org: 'crop',
    success: 200,
    request: () => ({ path: `/organizations/me/webhook/deliveries/${crop.deliveryId}/retry` }),
  },
  sendWebhookTestEvent: {
    org: 'crop',
    success: 202,
    request: () => ({ path: '/organizations/me/webhook/test', body: { event: 'kyb.verified' } }),
  },
};

/** A NOT_SETTLED report for crop's determination, correcting the current one if there is one. */
async function settlementReport() {
  const reports = await expectData(
    api('GET', `/determinations/${crop.determinationId}/settlement-report`, { key: crop.apiKey }),
    200,
    'settlement reports',
  );
  return {
    partnerReference: `COOP-PAY-${randomUUID()}`,
    outcome: 'NOT_SETTLED',
    method: 'OTHER',
    settledAmountMinor: '0',
    settlementCurrency: 'KES',
    settledAt: new Date(Date.now() - 60_000).toISOString(),
    ...(reports.current ? { supersedesReportId: reports.current.id } : {}),
  };
}

interface Case {
  operationId: string;
  caller: Caller;
  expected: string;
}

const CASES: Case[] = partnerRoutes.flatMap((route) =>
  CALLERS.map((caller) => ({
    operationId: route.operationId,
    caller,
    expected: mayCall(caller, route.capability as Capability)
      ? `its success (${PROBES[route.operationId]?.success})`
      : `403 lacking ${route.capability}`,
  })),
);

describe('the role table, from the contracts: every partner route × the API key and each role', () => {
  it('has a probe for every partner route, and a case for every route and caller', () => {
    expect(partnerRoutes.length).toBeGreaterThan(30);
    expect(Object.keys(PROBES).sort()).toEqual(partnerRoutes.map((r) => r.operationId).sort());
    expect(CASES).toHaveLength(partnerRoutes.length * CALLERS.length);
  });

  it('refuses somewhere for every narrower role, and lets the API key through everywhere', () => {
    // Guards the table against a vacuous run: each narrower role meets refusals, ORG_ADMIN none.
    for (const role of ROLES) {
      const refused = partnerRoutes.filter((r) => !roleHas(role, r.capability as Capability));
      expect({ role, refusedSome: refused.length > 0 }).toEqual({ role, refusedSome: role !== 'ORG_ADMIN' });
    }
  });

  it.each(CASES)('$operationId by $caller: $expected', async ({ operationId, caller }) => {
    const route = partnerRoutes.find((r) => r.operationId === operationId) as RouteContract;
    const capability = route.capability as Capability;
    const probe = PROBES[operationId] as Probe;
    const org =
      probe.org === 'throwaway'
        ? await throwawayOrg(caller)
        : probe.org === 'crop'
          ? crop
          : probe.org === 'sandbox'
            ? sandbox
            : settle;
    const { path, body } = await probe.request(org);
    const reply = await api(route.method.toUpperCase(), path, { ...credentialsOf(org, caller), body });
    const allowed = mayCall(caller, capability);
    if (allowed) {
      // The real success: the capability check passed and the call did what it says.
      expect({ status: reply.status, error: reply.body?.error }).toEqual({
        status: probe.success,
        error: undefined,
      });
    } else {
      expect(outcome(reply)).toEqual(refusal(caller as Role, capability));
    }
    await probe.after?.(reply, org, allowed);
  });
});

// ---------------------------------------------------------------------------------------------
// 2. What each role does in practice
// ---------------------------------------------------------------------------------------------

describe('each role in practice', () => {
  const token = (role: Role) => (crop.users[role] as SignedInUser).accessToken;

  it.each(ROLES)('%s: the session shows the role and exactly its capabilities', async (role) => {
    const session = await api('GET', '/auth/session', { token: token(role) });
    expect(session.status).toBe(200);
    expect(session.body.data).toMatchObject({
      organizationId: crop.id,
      principal: 'USER',
      role,
      user: { id: crop.users[role]?.userId, role, status: 'ACTIVE' },
    });
    expect([...session.body.data.capabilities].sort()).toEqual([...ROLE_CAPABILITIES[role]].sort());
  });

  it('ORG_VIEWER reads the organization, a farmer and a policy, and is refused determinations, the webhook and users', async () => {
    const viewer = { token: token('ORG_VIEWER') };
    const organization = await api('GET', '/organizations/me', viewer);
    const farmer = await api('GET', `/farmers/${crop.farmerId}`, viewer);
    const policy = await api('GET', `/policies/${crop.policyId}`, viewer);
    expect([organization.status, farmer.status, policy.status]).toEqual([200, 200, 200]);
    expect([organization.body.data.id, farmer.body.data.id, policy.body.data.id]).toEqual([
      crop.id,
      crop.farmerId,
      crop.policyId,
    ]);

    expect(outcome(await api('GET', '/determinations', viewer))).toEqual(
      refusal('ORG_VIEWER', 'determination:read'),
    );

    const webhookBefore = await api('GET', '/organizations/me/webhook', { key: crop.apiKey });
    const setWebhook = await api('PUT', '/organizations/me/webhook', {
      ...viewer,
      body: { url: 'https://elsewhere.example/hooks' },
    });
    expect(outcome(setWebhook)).toEqual(refusal('ORG_VIEWER', 'webhook:manage'));
    expect((await api('GET', '/organizations/me/webhook', { key: crop.apiKey })).body).toEqual(
      webhookBefore.body,
    );

    const email = `escalation-${randomUUID()}@example.org`;
    const invite = await api('POST', '/organizations/me/users', {
      ...viewer,
      body: { email, name: 'Not Invited', role: 'ORG_ADMIN' },
    });
    expect(outcome(invite)).toEqual(refusal('ORG_VIEWER', 'user:manage'));
    const users = await api('GET', '/organizations/me/users?limit=100', { key: crop.apiKey });
    expect(users.body.data.map((u: { email: string }) => u.email)).not.toContain(email);
  });

  it('ORG_OPERATOR registers a farmer and buys and activates a policy, but cannot rotate the API key', async () => {
    const operator = { token: token('ORG_OPERATOR') };
    const farmer = await api('POST', '/farmers', { ...operator, body: farmerBody() });
    expect(farmer.status).toBe(201);
    // KYC is an ops decision, not the partner's.
    await ops(`/farmers/${farmer.body.data.id}/kyc`, { status: 'APPROVED' });
    const plot = await api('POST', '/plots', { ...operator, body: plotBody(farmer.body.data.id) });
    expect(plot.status).toBe(201);
    const purchase = await api('POST', '/policies/purchase', {
      ...operator,
      body: cropPurchase({ farmerId: farmer.body.data.id, plotId: plot.body.data.id }),
    });
    expect([purchase.status, purchase.body.data?.policy.status]).toEqual([201, 'PENDING']);
    const activated = await api('PUT', `/policies/${purchase.body.data.policy.id}/activate`, {
      ...operator,
      body: {},
    });
    expect([activated.status, activated.body.data?.status]).toEqual([200, 'ACTIVE']);

    const rotate = await api('POST', '/organizations/me/api-key/rotate', operator);
    expect(outcome(rotate)).toEqual(refusal('ORG_OPERATOR', 'api-key:manage'));
    expect(await keyWorks(crop.apiKey)).toBe(200);
  });

  it('ORG_FINANCE lists determinations and records a settlement report, but cannot buy a policy', async () => {
    const finance = { token: token('ORG_FINANCE') };
    const list = await api('GET', '/determinations', finance);
    expect(list.status).toBe(200);
    expect(list.body.data.map((d: { determinationId: string }) => d.determinationId)).toContain(
      crop.determinationId,
    );

    const body = await settlementReport();
    const recorded = await api('POST', `/determinations/${crop.determinationId}/settlement-report`, {
      ...finance,
      body,
    });
    expect(recorded.status).toBe(201);
    expect(recorded.body.data).toMatchObject({
      replayed: false,
      determinationId: crop.determinationId,
      report: { partnerReference: body.partnerReference, outcome: 'NOT_SETTLED' },
    });
    const reports = await api('GET', `/determinations/${crop.determinationId}/settlement-report`, finance);
    expect(reports.body.data.current.partnerReference).toBe(body.partnerReference);

    const purchase = await api('POST', '/policies/purchase', { ...finance, body: cropPurchase(crop) });
    expect(outcome(purchase)).toEqual(refusal('ORG_FINANCE', 'policy:write'));
  });

  it('an ORG_ADMIN user invites, changes and deactivates users, and manages the webhook', async () => {
    const admin = { token: token('ORG_ADMIN') };
    const email = `managed-${randomUUID()}@example.org`;
    const invited = await api('POST', '/organizations/me/users', {
      ...admin,
      body: { email, name: 'Managed User', role: 'ORG_VIEWER' },
    });
    expect([invited.status, invited.body.data?.user.status]).toEqual([201, 'INVITED']);
    const id = invited.body.data.user.id;
    const listed = await api('GET', '/organizations/me/users?status=INVITED&limit=100', admin);
    expect(listed.body.data.map((u: { id: string }) => u.id)).toContain(id);
    const promoted = await api('PATCH', `/organizations/me/users/${id}`, {
      ...admin,
      body: { role: 'ORG_FINANCE' },
    });
    expect([promoted.status, promoted.body.data?.role]).toEqual([200, 'ORG_FINANCE']);
    const deactivated = await api('DELETE', `/organizations/me/users/${id}`, admin);
    expect([deactivated.status, deactivated.body.data?.status]).toEqual([200, 'DEACTIVATED']);

    const set = await api('PUT', '/organizations/me/webhook', { ...admin, body: { url: p.receiver.url } });
    expect([set.status, set.body.data?.url]).toEqual([200, p.receiver.url]);
    const rotated = await api('POST', '/organizations/me/webhook/rotate-secret', admin);
    expect(rotated.status).toBe(200);
    p.receiver.setSecret(rotated.body.data.secret);
    const config = await api('GET', '/organizations/me/webhook', admin);
    expect(config.body.data).toEqual({
      url: p.receiver.url,
      secretSet: true,
      secret: rotated.body.data.secret,
    });
  });
});

// ---------------------------------------------------------------------------------------------
// 3. Tokens across organizations
// ---------------------------------------------------------------------------------------------

/** The other organizations' ids: Tier 1 things from `other`, payments things from `settle`. */
const foreignIds = (): Ids => ({
  farmerId: other.farmerId,
  plotId: other.plotId,
  herdId: other.herdId,
  policyId: other.policyId,
  deliveryId: other.deliveryId,
  determinationId: other.determinationId,
  paymentId: settle.paymentId,
  quoteId: settle.quoteId,
  payoutId: settle.payoutId,
  userId: other.userId,
});

const FOREIGN_CASES = Object.keys(ID_PROBES).flatMap((operationId) =>
  ROLES.map((role) => ({ operationId, role })),
);

describe('a user token of one organization with another organization’s ids', () => {
  it('has a foreign-id probe for every partner route that takes an id', () => {
    const withIds = partnerRoutes.filter((r) => r.params).map((r) => r.operationId);
    expect(withIds.length).toBeGreaterThan(0);
    expect(Object.keys(ID_PROBES).sort()).toEqual([...withIds, ...BODY_REFERENCES].sort());
  });

  it.each(FOREIGN_CASES)(
    '$operationId by $role: answers exactly as for an unknown id',
    async ({ operationId, role }) => {
      const route = partnerRoutes.find((r) => r.operationId === operationId) as RouteContract;
      const send = (ids: Ids) => {
        const { path, body } = (ID_PROBES[operationId] as IdProbe)(ids, crop.farmerId);
        return api(route.method.toUpperCase(), path, { ...credentialsOf(crop, role), body });
      };
      const foreign = await send(foreignIds());
      const unknown = await send(unknownIds());
      // With the capability, the ownership check answers: 404. Without, the role check: 403.
      if (roleHas(role, route.capability as Capability)) {
        expect([foreign.status, foreign.body.error?.code]).toEqual([404, 'NOT_FOUND']);
      } else {
        expect(outcome(foreign)).toEqual(refusal(role, route.capability as Capability));
      }
      expect(foreign.body).toEqual(unknown.body);
    },
  );

  it("changed nothing of the other organization's: its user, policy, plots, herds and settlement reports", async () => {
    const user = await api('GET', `/organizations/me/users/${other.userId}`, { key: other.apiKey });
    expect(user.body.data).toMatchObject({ role: 'ORG_VIEWER', status: 'INVITED' });
    const policy = await api('GET', `/policies/${other.policyId}`, { key: other.apiKey });
    expect(policy.body.data.status).toBe('ACTIVE');
    const plots = await api('GET', `/farmers/${other.farmerId}/plots`, { key: other.apiKey });
    const herds = await api('GET', `/farmers/${other.farmerId}/herds`, { key: other.apiKey });
    expect([plots.body.data.length, herds.body.data.length]).toEqual([1, 1]);
    const reports = await api('GET', `/determinations/${other.determinationId}/settlement-report`, {
      key: other.apiKey,
    });
    expect(reports.body.data.reports).toEqual([]);
  });

  /** The ids a list shows (lists are read with `limit=100`, more than any organization here has). */
  const listed = async (path: string, options: CallOptions, id = 'id') => {
    const reply = await api('GET', `${path}?limit=100`, options);
    expect(reply.status).toBe(200);
    const items = Array.isArray(reply.body.data) ? reply.body.data : reply.body.data.deliveries;
    return (items as Record<string, string>[]).map((item) => item[id]).sort();
  };

  it.each([
    ['farmers', 'ORG_VIEWER', '/farmers', 'id'],
    ['determinations', 'ORG_FINANCE', '/determinations', 'determinationId'],
    ['users', 'ORG_ADMIN', '/organizations/me/users', 'id'],
    ['webhook deliveries', 'ORG_ADMIN', '/organizations/me/webhook/deliveries', 'id'],
    ['payouts', 'ORG_FINANCE', '/payouts', 'payoutId'],
  ] as const)('the %s list shows only the caller’s organization (as %s)', async (_what, role, path, id) => {
    const mine = await listed(path, credentialsOf(crop, role), id);
    // The same as the organization's own key sees, and nothing another organization has.
    expect(mine).toEqual(await listed(path, { key: crop.apiKey }, id));
    const theirs = [
      ...(await listed(path, { key: other.apiKey }, id)),
      ...(await listed(path, { key: settle.apiKey }, id)),
    ];
    expect(theirs.length).toBeGreaterThan(0);
    expect(mine.filter((item) => theirs.includes(item))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// 4. Paths that are no partner route
// ---------------------------------------------------------------------------------------------

describe('a path that is no partner route', () => {
  /** Undeclared paths and methods, some under prefixes the gateway forwards. */
  const UNDECLARED = [
    ['GET', '/organizations/me/secrets'],
    // Partners have no herd list (a farmer's herds are under the farmer); the policy service
    // sits behind this prefix.
    ['GET', '/herds'],
    // An ops action (KYC) on the partner port, under a forwarded prefix.
    ['POST', '/farmers/{farmer}/kyc'],
    // A declared path with an undeclared method.
    ['DELETE', '/farmers/{farmer}'],
  ] as const;

  const NARROWER = ROLES.filter((role) => role !== 'ORG_ADMIN');

  it.each(NARROWER.flatMap((role) => UNDECLARED.map(([method, path]) => ({ role, method, path }))))(
    '$method $path is 404 to $role',
    async ({ role, method, path }) => {
      const concrete = path.replace('{farmer}', crop.farmerId);
      const body = method === 'POST' ? { status: 'APPROVED' } : undefined;
      const reply = await api(method, concrete, { ...credentialsOf(crop, role), body });
      expect(outcome(reply)).toEqual({
        status: 404,
        code: 'NOT_FOUND',
        message: `No route for ${method} ${concrete}`,
      });
    },
  );
});
