import { randomUUID } from 'node:crypto';
import { PARTNER_ROUTES, type ServiceName } from '@parametric/contracts';
import {
  type Capability,
  type InternalContext,
  type PartnerCapability,
  ROLE_CAPABILITIES,
  ROLES,
  type Role,
  type RouteContract,
  signContext,
} from '@parametric/http';
import mongoose from 'mongoose';
import {
  type ActivePolicy,
  activeCropPolicy,
  assessment,
  type DeterminationsPlatform,
  SIGNING_SECRET,
  startDeterminationsPlatform,
} from '../../services/determinations/test/support';
import { type PaymentsStack, startPaymentsStack } from '../../services/payments/test/support';
import { farmerBody } from '../../services/policy/test/support';

/**
 * Every service holds to the role table on its own (issue 23): a request that reaches a service
 * without passing the gateway's capability check (a forwarding bug, a path the gateway read
 * differently) is refused there with the gateway's own answer. Each request here goes straight
 * to the service, with a context signed with the real secret, as only the gateway could sign it.
 */

/** The services behind the gateway that serve partner routes. */
const SERVICES = [
  'policy',
  'payments',
  'determinations',
  'webhooks',
] as const satisfies readonly ServiceName[];

let p: DeterminationsPlatform;
let payments: PaymentsStack;
let paymentsDb: mongoose.Connection;
/** A Tier 1 organization with an ACTIVE policy and a triggered determination on it. */
let insured: ActivePolicy;
let determinationId: string;

beforeAll(async () => {
  p = await startDeterminationsPlatform({}, {}, async ({ policyUrl, determinationsUrl, redisPrefix }) => {
    payments = await startPaymentsStack({ policyUrl, determinationsUrl, redisPrefix });
    return { gatewayEnv: { PAYMENTS_URL: payments.payments.url }, stop: () => payments.stop() };
  });
  paymentsDb = await mongoose
    .createConnection(payments.config.MONGO_URL, { dbName: payments.config.MONGO_DB })
    .asPromise();
  insured = await activeCropPolicy(p, { sumInsured: 1_000_000 });
  const issued = await p.gateway.ops('POST', '/determinations', {
    body: assessment({ policyId: insured.policyId }),
  });
  if (issued.status !== 201) throw new Error(`determination: ${JSON.stringify(issued.body)}`);
  determinationId = issued.body.data.determination.determinationId;
}, 120_000);

afterAll(async () => {
  await paymentsDb?.dropDatabase().catch(() => undefined);
  await paymentsDb?.close();
  await p?.stop();
});

const urlOf = (service: (typeof SERVICES)[number]) =>
  ({
    policy: p.policy.url,
    payments: payments.payments.url,
    determinations: p.determinations.url,
    webhooks: p.webhooks.url,
  })[service];

/** The context the gateway would sign for a caller of this role in the insured organization. */
function signedAs(role: Role, organizationId = insured.org.id): Record<string, string> {
  const context: InternalContext = {
    organizationId,
    role,
    requestId: `service-capabilities-${randomUUID()}`,
    issuedAt: Date.now(),
    organization: { countryCode: 'KE', kybStatus: 'VERIFIED', serviceTier: 'DETERMINATION', isActive: true },
  };
  return signContext(context, SIGNING_SECRET);
}

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
  body: any;
}

/** A request straight to a service's partner API (`/api`), as the role. */
async function direct(
  service: (typeof SERVICES)[number],
  role: Role,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const response = await fetch(`${urlOf(service)}/api${path}`, {
    method: method.toUpperCase(),
    headers: {
      ...signedAs(role),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** The gateway's refusal, word for word: what a service must answer too. */
const refusal = (role: Role, capability: Capability): Answer => ({
  status: 403,
  body: {
    success: false,
    error: {
      code: 'FORBIDDEN',
      message: `Your role ${role} lacks the capability ${capability} this endpoint needs`,
    },
  },
});

describe.each(SERVICES)('the %s service, called directly', (service) => {
  const routes = (PARTNER_ROUTES[service] as readonly RouteContract[]).filter(
    (route) => route.auth === 'partner',
  );
  const cases = routes.flatMap((route) =>
    ROLES.filter((role) => !ROLE_CAPABILITIES[role].includes(route.capability as PartnerCapability)).map(
      (role) => [route.operationId, role, route] as const,
    ),
  );

  it('serves partner routes, and some role lacks the capability of each', () => {
    expect(routes.length).toBeGreaterThan(0);
    expect(cases.length).toBeGreaterThan(0);
  });

  // Before anything else: no input is read, so the body and ids need not be valid.
  it.each(cases)('refuses %s to %s with the gateway’s 403', async (_id, role, route) => {
    const path = route.path.replace(/\{[^}]+\}/g, () => randomUUID());
    expect(await direct(service, role, route.method, path)).toEqual(
      refusal(role, route.capability as Capability),
    );
  });
});

describe('a forged context’s missing capability changes nothing; the capability lets the call through', () => {
  it('policy: a viewer creates no farmer (farmer:write); an operator does', async () => {
    const farmers = async () =>
      (await direct('policy', 'ORG_VIEWER', 'get', '/farmers')).body.pagination.total;
    const before = await farmers();
    expect(await direct('policy', 'ORG_VIEWER', 'post', '/farmers', farmerBody())).toEqual(
      refusal('ORG_VIEWER', 'farmer:write'),
    );
    expect(await farmers()).toBe(before);
    const created = await direct('policy', 'ORG_OPERATOR', 'post', '/farmers', farmerBody());
    expect(created.status).toBe(201);
    expect(await farmers()).toBe(before + 1);
  });

  it('payments: finance gets no quote (payment:read); an operator does', async () => {
    const quotes = () => paymentsDb.collection('quotes').countDocuments({ organizationId: insured.org.id });
    const body = { amount: 1000, fromCurrency: 'KES', toCurrency: 'USDC' };
    expect(await direct('payments', 'ORG_FINANCE', 'post', '/payments/quote', body)).toEqual(
      refusal('ORG_FINANCE', 'payment:read'),
    );
    expect(await quotes()).toBe(0);
    const quoted = await direct('payments', 'ORG_OPERATOR', 'post', '/payments/quote', body);
    expect(quoted.status).toBe(201);
    expect(await quotes()).toBe(1);
  });

  it('determinations: an operator reports no settlement (settlement-report:write); finance does', async () => {
    const owed = (await direct('determinations', 'ORG_FINANCE', 'get', `/determinations/${determinationId}`))
      .body.data.amountOwed.amountMinor;
    const report = {
      partnerReference: `COOP-PAY-${randomUUID()}`,
      outcome: 'SETTLED_FULL',
      method: 'MOBILE_MONEY',
      settledAmountMinor: owed,
      settlementCurrency: 'KES',
      settledAt: new Date().toISOString(),
    };
    const path = `/determinations/${determinationId}/settlement-report`;
    const settlement = async () => {
      const { data } = (await direct('determinations', 'ORG_FINANCE', 'get', path)).body;
      return { status: data.partnerSettlementStatus, reports: data.reports.length };
    };
    expect(await direct('determinations', 'ORG_OPERATOR', 'post', path, report)).toEqual(
      refusal('ORG_OPERATOR', 'settlement-report:write'),
    );
    expect(await settlement()).toEqual({ status: 'PENDING', reports: 0 });
    const recorded = await direct('determinations', 'ORG_FINANCE', 'post', path, report);
    expect([recorded.status, recorded.body.data?.partnerSettlementStatus]).toEqual([201, 'REPORTED']);
    expect(await settlement()).toEqual({ status: 'REPORTED', reports: 1 });
  });

  it('webhooks: finance sets no webhook URL (webhook:manage); the admin does', async () => {
    const webhook = async () =>
      (await direct('webhooks', 'ORG_ADMIN', 'get', '/organizations/me/webhook')).body;
    const before = await webhook();
    expect(
      await direct('webhooks', 'ORG_FINANCE', 'put', '/organizations/me/webhook', { url: p.receiver.url }),
    ).toEqual(refusal('ORG_FINANCE', 'webhook:manage'));
    expect(await webhook()).toEqual(before);
    const set = await direct('webhooks', 'ORG_ADMIN', 'put', '/organizations/me/webhook', {
      url: p.receiver.url,
    });
    expect([set.status, set.body.data?.url]).toEqual([200, p.receiver.url]);
    expect((await webhook()).data.url).toBe(p.receiver.url);
  });
});
