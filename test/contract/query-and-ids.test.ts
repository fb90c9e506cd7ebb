import { OPS_ROUTES, PARTNER_ROUTES } from '@parametric/contracts';
import type { RouteContract } from '@parametric/http';
import {
  type DeterminationsPlatform,
  startDeterminationsPlatform,
} from '../../services/determinations/test/support';
import { startPaymentsStack } from '../../services/payments/test/support';
import { plotBody } from '../../services/policy/test/support';
import { ID_PROBES, type IdProbe, type Ids, unknownIds } from './id-probes';
import { type OwnedResources, ownEveryResource } from './owned-resources';

/**
 * Issue 22, rows 11 and 12, through the gateway on every route: a query parameter a route does
 * not declare (or one given twice) is `400 INVALID_INPUT` naming it, never silently dropped; and
 * an id is the same id in any case (RFC 9562), for the caller's own resources, in the path, the
 * query and the body.
 */

const partnerRoutes = Object.values(PARTNER_ROUTES).flat() as RouteContract[];
const opsRoutes = Object.values(OPS_ROUTES).flat() as RouteContract[];

let p: DeterminationsPlatform;
let o: OwnedResources;

beforeAll(async () => {
  p = await startDeterminationsPlatform({}, {}, async ({ policyUrl, determinationsUrl, redisPrefix }) => {
    const payments = await startPaymentsStack({ policyUrl, determinationsUrl, redisPrefix });
    return {
      gatewayEnv: { PAYMENTS_URL: payments.payments.url, PAYMENTS_INITIATE_LIMIT_POINTS: '1000' },
      stop: () => payments.stop(),
    };
  });
  o = await ownEveryResource(p, { webhook: true });
}, 90_000);

afterAll(async () => {
  await p?.stop();
});

const fill = (template: string, id: string) => template.replace(/\{[A-Za-z0-9_]+\}/g, id);

/** A request a route would otherwise take: the caller's own ids, its credentials. */
function requestOf(route: RouteContract, api: 'partner' | 'ops'): { path: string; body?: unknown } {
  if (api === 'partner') {
    const probe = ID_PROBES[route.operationId] as IdProbe | undefined;
    if (probe) return probe(o, o.farmerId);
    return { path: route.path, ...(route.method === 'get' ? {} : { body: {} }) };
  }
  const id = route.path.startsWith('/organizations/')
    ? o.id
    : route.path.startsWith('/farmers/')
      ? o.farmerId
      : route.path.startsWith('/policies/by-number/')
        ? o.policyNumber
        : route.path.startsWith('/policies/')
          ? o.policyId
          : route.path.startsWith('/payouts/')
            ? o.payoutId
            : o.determinationId;
  return { path: fill(route.path, id), ...(route.method === 'get' ? {} : { body: {} }) };
}

const send = (api: 'partner' | 'ops', route: RouteContract, path: string, body?: unknown) =>
  api === 'partner'
    ? p.gateway.api(route.method.toUpperCase(), path, {
        ...(route.auth === 'partner' ? { key: o.apiKey } : {}),
        body,
      })
    : p.gateway.ops(route.method.toUpperCase(), path, { body });

describe('row 12: query parameters', () => {
  const every = [
    ...partnerRoutes.map((route) => ['partner', route] as const),
    ...opsRoutes.map((route) => ['ops', route] as const),
  ].filter(([, route]) => !route.ignoresQuery);

  it.each(
    every.map(([api, route]) => [`${api} ${route.method.toUpperCase()} ${route.path}`, api, route] as const),
  )(
    '%s refuses a parameter it does not declare with 400 naming it, before anything else is done',
    async (_name, api, route) => {
      const { path, body } = requestOf(route, api);
      const reply = await send(api, route, `${path}?unexpected=1`, body);
      expect([reply.status, reply.body.error?.code]).toEqual([400, 'INVALID_INPUT']);
      expect(reply.body.error.message).toBe('Invalid query parameters');
      expect(reply.body.error.details).toEqual([
        {
          field: 'unexpected',
          message: expect.stringMatching(/^Unknown query parameter: this endpoint takes/),
        },
      ]);
    },
  );

  it.each([
    [
      'GET /payouts?status[]=FAILED',
      '/payouts?status[]=FAILED',
      'status[]',
      /send status=<value> once, without brackets/,
    ],
    [
      'GET /payouts?status=FAILED&status=COMPLETED',
      '/payouts?status=FAILED&status=COMPLETED',
      'status',
      /^must be given once$/,
    ],
    [
      'GET /determinations?foo=bar',
      '/determinations?foo=bar',
      'foo',
      /takes page, limit, policyId, triggered, partnerSettlementStatus/,
    ],
    [
      'GET /organizations/me/webhook/deliveries?x=1',
      '/organizations/me/webhook/deliveries?x=1',
      'x',
      /takes page, limit, status/,
    ],
    ['GET /organizations/me?x=1', '/organizations/me?x=1', 'x', /this endpoint takes none/],
    [
      'GET /farmers?kycStatus[0]=APPROVED',
      '/farmers?kycStatus%5B0%5D=APPROVED',
      'kycStatus[0]',
      /without brackets/,
    ],
  ])(
    '%s is 400 INVALID_INPUT naming the parameter (it used to answer the whole list)',
    async (_what, path, field, message) => {
      const reply = await p.gateway.api('GET', path, { key: o.apiKey });
      expect([reply.status, reply.body.error?.code]).toEqual([400, 'INVALID_INPUT']);
      expect(reply.body.error.details).toEqual([{ field, message: expect.stringMatching(message) }]);
    },
  );

  it('still filters with the parameters a list declares', async () => {
    const completed = await p.gateway.api('GET', '/payouts?status=COMPLETED', { key: o.apiKey });
    expect(completed.status).toBe(200);
    expect(completed.body.data.map((x: { payoutId: string }) => x.payoutId)).toEqual([o.payoutId]);
    const failed = await p.gateway.api('GET', '/payouts?status=FAILED', { key: o.apiKey });
    expect([failed.status, failed.body.data]).toEqual([200, []]);
  });

  it('lets the documents ignore what tools add to their URL', async () => {
    const json = await p.gateway.api('GET', '/openapi.json?v=2&utm_source=mail');
    expect([json.status, json.body.openapi]).toEqual([200, '3.1.0']);
    expect((await fetch(`${p.gateway.gateway.partnerUrl}/docs?utm_source=mail`)).status).toBe(200);
    const jwks = await fetch(`${p.gateway.gateway.partnerUrl}/.well-known/jwks.json?cache=1`);
    expect(jwks.status).toBe(200);
    expect(((await jwks.json()) as { keys: unknown[] }).keys.length).toBeGreaterThan(0);
    expect((await p.gateway.ops('GET', '/openapi.json?v=2')).status).toBe(200);
  });
});

describe('row 11: ids in any case', () => {
  const upper = (ids: Ids): Ids =>
    Object.fromEntries(
      Object.keys(unknownIds()).map((name) => [name, ids[name as keyof Ids].toUpperCase()]),
    ) as Ids;
  const reads = partnerRoutes.filter((r) => r.method === 'get' && ID_PROBES[r.operationId]);

  it('covers the reads of one resource of every kind', () => {
    expect(reads.map((r) => r.operationId).sort()).toEqual(
      expect.arrayContaining([
        'getDetermination',
        'getPolicy',
        'getPayout',
        'getPayment',
        'getQuote',
        'getUser',
      ]),
    );
  });

  it.each(reads.map((r) => [r.operationId, r] as const))(
    '%s with the caller’s own id in upper case answers the same resource as in lower case',
    async (operationId, route) => {
      const probe = ID_PROBES[operationId] as IdProbe;
      const lower = await send('partner', route, probe(o, o.farmerId).path);
      const shouted = await send('partner', route, probe(upper(o), o.farmerId).path);
      expect(lower.status).toBe(200);
      expect(shouted.status).toBe(200);
      expect(shouted.body).toEqual(lower.body);
    },
  );

  it('reads a query id in any case: GET /determinations?policyId=…', async () => {
    const lower = await p.gateway.api('GET', `/determinations?policyId=${o.activePolicyId}`, {
      key: o.apiKey,
    });
    const shouted = await p.gateway.api('GET', `/determinations?policyId=${o.activePolicyId.toUpperCase()}`, {
      key: o.apiKey,
    });
    expect(lower.body.data.map((d: { determinationId: string }) => d.determinationId)).toEqual([
      o.determinationId,
    ]);
    expect(shouted.body).toEqual(lower.body);
  });

  it('reads a body id in any case, and writes it as the resource’s own (lower case)', async () => {
    const plot = await p.gateway.api('POST', '/plots', {
      key: o.apiKey,
      body: plotBody(o.farmerId.toUpperCase()),
    });
    expect(plot.status).toBe(201);
    expect(plot.body.data.farmerId).toBe(o.farmerId);
    const listed = await p.gateway.api('GET', `/farmers/${o.farmerId}/plots`, { key: o.apiKey });
    expect(listed.body.data.map((x: { id: string }) => x.id)).toContain(plot.body.data.id);
  });

  it('records a settlement report on a determination named in upper case, under its own id', async () => {
    const reply = await p.gateway.api(
      'POST',
      `/determinations/${o.determinationId.toUpperCase()}/settlement-report`,
      {
        key: o.apiKey,
        body: {
          partnerReference: 'UPPER-CASE-1',
          outcome: 'SETTLED_FULL',
          method: 'MOBILE_MONEY',
          settledAmountMinor: '1250000',
          settlementCurrency: 'KES',
          settledAt: new Date().toISOString(),
        },
      },
    );
    expect(reply.status).toBe(201);
    expect(reply.body.data.determinationId).toBe(o.determinationId);
    const listed = await p.gateway.api('GET', `/determinations/${o.determinationId}/settlement-report`, {
      key: o.apiKey,
    });
    expect(listed.body.data.current.id).toBe(reply.body.data.report.id);
  });
});
