import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { OPS_ROUTES, PARTNER_ROUTES } from '@parametric/contracts';
import {
  ERROR_STATUS,
  errorCodesOf,
  MAX_BODY_BYTES,
  MAX_OPS_BODY_BYTES,
  type RouteContract,
} from '@parametric/http';
import { checkAgainstDocument, takeContractViolations, testMongoUrl } from '@parametric/test-harness';
import fc from 'fast-check';
import { BSON, MongoClient } from 'mongodb';
import {
  assessment,
  type DeterminationsPlatform,
  startDeterminationsPlatform,
} from '../../services/determinations/test/support';
import { OPS_TOKEN, signInOperator } from '../../services/gateway/test/support';
import { startPaymentsStack } from '../../services/payments/test/support';
import { cropPurchase, herdBody, plotBody } from '../../services/policy/test/support';
import {
  type BodyCase,
  hostileBodies,
  hostileQueries,
  hostileSegments,
  judgeBody,
  judgeQuery,
  type Verdict,
} from './hostile-inputs';
import { type OwnedResources, ownEveryResource } from './owned-resources';

/**
 * The bad-input sweep (issue 14): every route of the partner and ops OpenAPI documents gets
 * hostile input from a property-based generator (./hostile-inputs.ts) as raw HTTP through the
 * gateway, with a valid API key (ops: the ops token) and real ids of resources the caller owns,
 * so a bad body meets a real resource. Every answer must be a 4xx in the spec's error envelope
 * with one of the route's documented codes (a read with odd but acceptable input may answer
 * 2xx), never a 5xx; and after every request every document of every database of the platform
 * must be as it was.
 *
 * `npm test` runs it with a fixed seed; `npm run fuzz` runs it longer with a random seed
 * (FUZZ_RUNS runs per route, FUZZ_SEED to replay one).
 */

const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 0);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : FUZZ_RUNS ? Date.now() % 2 ** 31 : 1414;
const RUNS = FUZZ_RUNS || 12;

interface SweptRoute {
  route: RouteContract;
  api: 'partner' | 'ops';
}

const sweptRoutes: SweptRoute[] = [
  ...(Object.values(PARTNER_ROUTES).flat() as RouteContract[]).map((route) => ({
    route,
    api: 'partner' as const,
  })),
  ...(Object.values(OPS_ROUTES).flat() as RouteContract[]).map((route) => ({ route, api: 'ops' as const })),
];

// ---------------------------------------------------------------------------------------------
// The platform and what the caller owns.

type Owned = OwnedResources;

let p: DeterminationsPlatform;
let o: Owned;
let mongo: MongoClient;
/** Databases that existed before the platform started: other test files', not ours. */
let foreign: Set<string>;

const own = () => ownEveryResource(p, { webhook: true });

/** The real id each route's `{id}` names (ops: organizations, farmers, policies, determinations). */
function realParams(route: RouteContract, api: 'partner' | 'ops'): Record<string, string> {
  const path = route.path;
  if (path.includes('{policyNumber}')) return { policyNumber: o.policyNumber };
  if (!path.includes('{id}')) return {};
  const first = path.split('/')[1];
  const byResource: Record<string, string> = {
    farmers: o.farmerId,
    plots: o.plotId,
    herds: o.herdId,
    policies: o.policyId,
    payments: path.startsWith('/payments/quotes') ? o.quoteId : o.paymentId,
    payouts: o.payoutId,
    determinations: o.determinationId,
    operators: operatorId,
    clients: clientId,
    approvals: approvalId,
    organizations: path.includes('/webhook/deliveries/')
      ? o.deliveryId
      : path.startsWith('/organizations/me/users')
        ? o.userId
        : o.id,
  };
  if (api === 'ops' && first === 'organizations') return { id: o.id };
  const id = byResource[first as string];
  if (!id) throw new Error(`no owned resource for ${route.operationId} (${path})`);
  return { id };
}

/** A valid body for each route that takes one (valid in shape; ids are the caller's own). */
function validBody(route: RouteContract): unknown {
  const bodies: Record<string, unknown> = {
    registerOrganization: { name: 'Sweep Cooperative', type: 'COOPERATIVE', countryCode: 'KE' },
    updateSettings: { brandColor: '#1A7F37', contactPhone: '+254712345678' },
    createUser: { email: 'sweep@example.org', name: 'Sweep User', role: 'ORG_OPERATOR' },
    updateUser: { role: 'ORG_FINANCE' },
    acceptInvitation: { token: 'no-such-invitation-token', password: 'maize-harvest-2026-long' },
    login: { email: 'nobody@example.org', password: 'maize-harvest-2026-long' },
    refreshSession: { refreshToken: 'no-such-refresh-token' },
    logout: { refreshToken: 'no-such-refresh-token' },
    cookieLogin: { email: 'nobody@example.org', password: 'maize-harvest-2026-long' },
    registerFarmer: {
      firstName: 'Amina',
      lastName: 'Otieno',
      phoneNumber: '+254712345678',
      nationalId: 'KE12345678',
      region: 'Nakuru',
    },
    bulkImportFarmers: {
      farmers: [
        {
          firstName: 'Amina',
          lastName: 'Otieno',
          phoneNumber: '+254712345679',
          nationalId: 'KE1',
          region: 'Nakuru',
        },
      ],
    },
    registerPlot: plotBody(o.farmerId),
    registerHerd: herdBody(o.farmerId),
    purchasePolicy: cropPurchase({ farmerId: o.farmerId, plotId: o.plotId }),
    activatePolicy: { premiumReference: 'MPESA-QK81XY2Z' },
    initiatePayment: { reference: o.pendingPolicyId, amount: 1479, phoneNumber: '+254712345678' },
    createQuote: { amount: 1000, fromCurrency: 'KES', toCurrency: 'USDC' },
    recordSettlementReport: {
      partnerReference: 'SWEEP-1',
      outcome: 'SETTLED_FULL',
      method: 'MOBILE_MONEY',
      settledAmountMinor: '1250000',
      settlementCurrency: 'KES',
      // After the determination was issued (a report settled before it is refused): bodies are
      // made once the caller's resources exist.
      settledAt: new Date().toISOString(),
    },
    setWebhook: { url: 'https://partner.example.com/hooks/insurance' },
    sendWebhookTestEvent: { event: 'kyb.verified' },
    opsSetKyb: { status: 'VERIFIED', notes: 'Certificate of registration checked' },
    opsSetServiceTier: { serviceTier: 'DETERMINATION_AND_SETTLEMENT' },
    opsSetFarmerKyc: { status: 'APPROVED' },
    opsRecordLicence: { market: 'KE', licenceNumber: 'IRA/2026/0042', expiresAt: '2099-06-30T00:00:00Z' },
    opsRecordCapacity: { amount: 10_000_000, currency: 'KES', solvencyAttestedUntil: '2099-06-30T00:00:00Z' },
    opsOriginatePayout: { determinationId: o.determinationId },
    opsCreateOperator: { email: 'sweep-operator@insurer.example', role: 'SUPPORT' },
    opsUpdateOperator: { role: 'FINANCE' },
    opsCreateClient: { name: 'sweep data provider', scopes: ['determinations:ingest'] },
    opsRejectApproval: { reason: 'sweep' },
    createSandboxDetermination: { policyId: o.activePolicyId, triggered: true, damagePercentBp: 1_000 },
    opsAcceptInvitation: { token: 'no-such-invitation-token', password: 'maize-harvest-2026-long' },
    opsLogin: { email: 'nobody@insurer.example', password: 'maize-harvest-2026-long' },
    opsRefreshSession: { refreshToken: 'no-such-refresh-token' },
    opsLogout: { refreshToken: 'no-such-refresh-token' },
    opsIngestDetermination: assessment({ policyId: o.activePolicyId }),
    opsIngestDeterminationBatch: { items: [assessment({ policyId: o.activePolicyId })] },
  };
  return bodies[route.operationId] ?? {};
}

// ---------------------------------------------------------------------------------------------
// Nothing written: every document of every database of the platform, hashed.

async function snapshot(): Promise<Map<string, string>> {
  const state = new Map<string, string>();
  const { databases } = await mongo.db('admin').admin().listDatabases({ nameOnly: true });
  for (const { name } of databases) {
    // Ours: made since the platform started, by this worker (other workers' files run alongside).
    if (foreign.has(name) || !name.startsWith(`t${process.env.JEST_WORKER_ID ?? '0'}_`)) continue;
    const db = mongo.db(name);
    for (const { name: collection } of await db.listCollections({}, { nameOnly: true }).toArray()) {
      const docs = await db.collection(collection).find({}).sort({ _id: 1 }).toArray();
      const hash = createHash('sha256');
      for (const doc of docs) hash.update(BSON.EJSON.stringify(doc, { relaxed: false }));
      state.set(
        `${name}.${collection}`,
        `${docs.length} documents, sha256 ${hash.digest('hex').slice(0, 16)}`,
      );
    }
  }
  return state;
}

function changes(before: Map<string, string>, after: Map<string, string>): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names]
    .filter((n) => before.get(n) !== after.get(n))
    .map((n) => `${n}: ${before.get(n) ?? '(none)'} → ${after.get(n) ?? '(none)'}`);
}

/** Waits until two snapshots a while apart agree (workers, relays and deliveries at rest). */
async function quiet(): Promise<Map<string, string>> {
  let last = await snapshot();
  for (let i = 0; i < 60; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const next = await snapshot();
    if (changes(last, next).length === 0) return next;
    last = next;
  }
  throw new Error('the platform never came to rest');
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP: the path, query, headers and body bytes exactly as generated.

interface Answer {
  status: number;
  contentType: string;
  text: string;
  body: unknown;
}

function send(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
  body: Buffer | string | undefined,
): Promise<Answer> {
  const url = new URL(base);
  // Always a length: without one, Node sends a GET's or DELETE's body bytes as a next request.
  if (body !== undefined) headers = { ...headers, 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: `${url.pathname.replace(/\/$/, '')}${path}`,
        headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {}
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            text,
            body: parsed,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

// ---------------------------------------------------------------------------------------------
// The sweep.

interface Case {
  part: 'body' | 'path' | 'query' | 'headers';
  label: string;
  path: string;
  query: string;
  body: BodyCase;
  headers: Record<string, string | string[]>;
  verdict: Verdict;
}

const fill = (template: string, params: Record<string, string>) =>
  template.replace(/\{([A-Za-z0-9_]+)\}/g, (_, name: string) => params[name] ?? '');

function combine(route: RouteContract, ...verdicts: Verdict[]): Verdict {
  const refused = verdicts.find((v) => v.expect === 'refused');
  if (refused) return refused;
  if (route.method === 'get') return { expect: 'noop', why: 'a read' };
  return verdicts.find((v) => v.expect === 'noop') ?? { expect: 'valid', why: 'valid' };
}

function casesFor({ route, api }: SweptRoute): fc.Arbitrary<Case> {
  const params = realParams(route, api);
  const limit = api === 'ops' ? MAX_OPS_BODY_BYTES : MAX_BODY_BYTES;
  const realPath = fill(route.path, params);
  const valid = route.body ? validBody(route) : undefined;
  const validBodyCase: BodyCase = {
    label: 'valid body',
    body: valid === undefined ? undefined : JSON.stringify(valid),
  };
  const headers = (extra: Record<string, string | string[]> = {}): Record<string, string | string[]> => ({
    ...(api === 'ops'
      ? { authorization: `Bearer ${OPS_TOKEN}` }
      : route.auth === 'partner'
        ? { 'x-api-key': o.apiKey }
        : {}),
    // The dashboard's cookie routes (docs/dashboard.md): their required proof of origin.
    ...(route.headers && 'X-Requested-By' in route.headers.shape ? { 'x-requested-by': 'dashboard' } : {}),
    ...extra,
  });
  const withBody = (b: BodyCase, extra: Record<string, string | string[]> = {}) => {
    const h = headers(extra);
    if (b.body !== undefined) {
      if (b.contentType === undefined) h['content-type'] = 'application/json';
      else if (b.contentType !== '') h['content-type'] = b.contentType;
      if (b.contentEncoding) h['content-encoding'] = b.contentEncoding;
    }
    return h;
  };
  const kinds: fc.Arbitrary<Case>[] = [];
  const bodyBase = valid ?? (route.method === 'get' ? undefined : {});
  // Bodies: every route may be sent one (a route without a body schema must still refuse what
  // no route accepts, and a read must not be changed into a write by one).
  kinds.push(
    hostileBodies(bodyBase ?? {}).map((b) => ({
      part: 'body' as const,
      label: b.label,
      path: realPath,
      query: '',
      body: b,
      headers: withBody(b),
      verdict: combine(route, judgeBody(route, b, limit)),
    })),
  );
  // Path parameters: each one hostile in turn, the rest real, with a valid body.
  for (const name of Object.keys(params)) {
    kinds.push(
      hostileSegments.map((segment) => ({
        part: 'path' as const,
        label: `${name} = ${segment.slice(0, 80)}`,
        path: fill(route.path, { ...params, [name]: segment }),
        query: '',
        body: validBodyCase,
        headers: withBody(validBodyCase),
        verdict: { expect: 'refused' as const, why: 'no such resource' },
      })),
    );
  }
  // Query strings: the route's own parameters and others, duplicated, out of range.
  const queryKeys = route.query ? Object.keys(route.query.shape) : ['page'];
  kinds.push(
    hostileQueries(queryKeys).map((query) => ({
      part: 'query' as const,
      label: `?${query.slice(0, 120)}`,
      path: realPath,
      query,
      body: validBodyCase,
      headers: withBody(validBodyCase),
      verdict: combine(route, judgeQuery(route, query), judgeBody(route, validBodyCase, limit)),
    })),
  );
  // Credentials that are not quite the caller's (`null` drops the header).
  const credentials: [string, Record<string, string | string[] | null>][] =
    route.auth === 'partner'
      ? [
          ['the key twice', { 'x-api-key': [o.apiKey, o.apiKey] }],
          ['the key and a bearer token', { authorization: 'Bearer not-a-token' }],
          ['the key with %00 after it', { 'x-api-key': `${o.apiKey}%00` }],
          ['the key upper-cased', { 'x-api-key': o.apiKey.toUpperCase() }],
          ['the key truncated', { 'x-api-key': o.apiKey.slice(0, -1) }],
          ['an empty key', { 'x-api-key': '' }],
          ['an operator object as the key', { 'x-api-key': '{"$gt":""}' }],
          ['no key', { 'x-api-key': null }],
          [
            'a forged bearer token',
            { 'x-api-key': null, authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' },
          ],
          ['the key as a bearer token', { 'x-api-key': null, authorization: `Bearer ${o.apiKey}` }],
        ]
      : api === 'ops' && route.auth !== 'none'
        ? [
            ['no token', { authorization: null }],
            ['a wrong token', { authorization: 'Bearer wrong-ops-token-0123456789abcdef' }],
            ['the token truncated', { authorization: `Bearer ${OPS_TOKEN.slice(0, -1)}` }],
            [
              'the token as Basic',
              { authorization: `Basic ${Buffer.from(`ops:${OPS_TOKEN}`).toString('base64')}` },
            ],
            ['the token without a scheme', { authorization: OPS_TOKEN }],
            ['a wrong token, then the token', { authorization: ['Bearer wrong', `Bearer ${OPS_TOKEN}`] }],
            ['the token as an API key', { authorization: null, 'x-api-key': OPS_TOKEN }],
          ]
        : [];
  if (credentials.length) {
    kinds.push(
      fc.constantFrom(...credentials).map(([label, extra]) => ({
        part: 'headers' as const,
        label,
        path: realPath,
        query: '',
        body: validBodyCase,
        headers: Object.fromEntries(
          Object.entries({ ...withBody(validBodyCase), ...extra }).filter(([, v]) => v !== null),
        ) as Record<string, string | string[]>,
        verdict: { expect: 'refused' as const, why: 'not the caller’s credentials' },
      })),
    );
  }
  // A route that reads an Idempotency-Key (its contract's headers): keys it must refuse.
  if (route.headers && 'Idempotency-Key' in route.headers.shape) {
    const badKeys: [string, string | string[]][] = [
      ['an empty Idempotency-Key', ''],
      ['an Idempotency-Key of 256 characters', 'k'.repeat(256)],
      ['an Idempotency-Key with a tab', 'a\tb'],
      ['an Idempotency-Key in latin1', 'caf\xe9'],
      ['an Idempotency-Key sent twice', ['key-1', 'key-2']],
      ['an Idempotency-Key sent twice, the same', ['key-1', 'key-1']],
    ];
    kinds.push(
      fc.constantFrom(...badKeys).map(([label, value]) => ({
        part: 'headers' as const,
        label,
        path: realPath,
        query: '',
        body: validBodyCase,
        headers: { ...withBody(validBodyCase), 'idempotency-key': value },
        verdict: { expect: 'refused' as const, why: 'a malformed Idempotency-Key' },
      })),
    );
  }
  return fc.oneof(...kinds);
}

function problemsWith(route: RouteContract, c: Case, answer: Answer, written: string[]): string[] {
  const problems: string[] = [];
  const { status } = answer;
  if (status >= 500) problems.push(`answered ${status}`);
  if (c.verdict.expect === 'refused' && (status < 400 || status >= 500)) {
    problems.push(`answered ${status} to input that is invalid (${c.verdict.why})`);
  }
  if (status >= 400) {
    const body = answer.body as {
      success?: unknown;
      error?: { code?: unknown; message?: unknown; details?: unknown };
    };
    const error = body?.error;
    const codes = errorCodesOf(route);
    if (body?.success !== false || typeof error !== 'object' || error === null) {
      problems.push('the answer is not the error envelope');
    } else {
      const extra = Object.keys(body).filter((k) => k !== 'success' && k !== 'error');
      const extraInError = Object.keys(error).filter((k) => !['code', 'message', 'details'].includes(k));
      if (extra.length || extraInError.length)
        problems.push(`the envelope has more: ${[...extra, ...extraInError]}`);
      if (typeof error.code !== 'string' || !codes.includes(error.code as never)) {
        problems.push(`code ${String(error.code)} is not one the route documents (${codes.join(', ')})`);
      } else if (ERROR_STATUS[error.code as keyof typeof ERROR_STATUS] !== status) {
        problems.push(`code ${error.code} with status ${status}`);
      }
      if (typeof error.message !== 'string' || error.message === '') problems.push('no message');
      const rateLimit = error.details as { limit?: unknown; retryAfter?: unknown } | undefined;
      if (error.code === 'RATE_LIMIT_EXCEEDED') {
        if (typeof rateLimit?.limit !== 'number' || typeof rateLimit.retryAfter !== 'number') {
          problems.push('details is not { limit, retryAfter }');
        }
      } else if (
        error.details !== undefined &&
        !(
          Array.isArray(error.details) &&
          error.details.every(
            (d) =>
              d &&
              typeof d.field === 'string' &&
              typeof d.message === 'string' &&
              Object.keys(d).length === 2,
          )
        )
      ) {
        problems.push('details is not a list of { field, message }');
      }
    }
  }
  problems.push(...takeContractViolations());
  if (written.length) problems.push(`wrote: ${written.join('; ')}`);
  return problems;
}

let baseline: Map<string, string>;
let operatorId: string;
let clientId: string;
let approvalId: string;

beforeAll(async () => {
  mongo = await MongoClient.connect(testMongoUrl());
  foreign = new Set(
    (await mongo.db('admin').admin().listDatabases({ nameOnly: true })).databases.map((d) => d.name),
  );
  p = await startDeterminationsPlatform({}, {}, async ({ policyUrl, determinationsUrl, redisPrefix }) => {
    // The sweep's premium stays pending (the simulator never calls back for its number): the
    // reconciliation sweep would query it after 2 minutes, a write no request made (`npm run fuzz`
    // runs longer than that).
    const payments = await startPaymentsStack(
      { policyUrl, determinationsUrl, redisPrefix },
      // Likewise the payout origination sweep, which records how far it got.
      {
        PAYMENTS_RECONCILE_AFTER_SECONDS: String(7 * 86_400),
        PAYOUT_ORIGINATION_SETTLE_SECONDS: String(7 * 86_400),
      },
    );
    return {
      gatewayEnv: {
        PAYMENTS_URL: payments.payments.url,
        PAYMENTS_INITIATE_LIMIT_POINTS: '100000',
        REGISTRATION_LIMIT_POINTS: '100000',
        // Every request with a wrong key counts against the caller's address.
        ANONYMOUS_LIMIT_POINTS: '100000',
      },
      stop: () => payments.stop(),
    };
  });
  o = await own();
  // An operator for the ops routes that name one (`/operators/{id}`): operators are the insurer's
  // people, not an organization's resources, so ownEveryResource has none.
  const invited = await fetch(`${p.gateway.gateway.opsUrl}/operators`, {
    method: 'POST',
    headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'sweep-target@insurer.example', role: 'SUPPORT' }),
  });
  if (invited.status !== 201) throw new Error(`inviting the sweep's operator: ${invited.status}`);
  operatorId = ((await invited.json()) as { data: { operator: { id: string } } }).data.operator.id;
  // Likewise a machine client for `/clients/{id}/…`.
  const client = await fetch(`${p.gateway.gateway.opsUrl}/clients`, {
    method: 'POST',
    headers: { authorization: `Bearer ${OPS_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'sweep target', scopes: ['ops:read'] }),
  });
  if (client.status !== 201) throw new Error(`creating the sweep's client: ${client.status}`);
  clientId = ((await client.json()) as { data: { clientId: string } }).data.clientId;
  // And a pending approval for `/approvals/{id}/…`: an operator's tier change (four eyes).
  const underwriter = await signInOperator(p.gateway, 'UNDERWRITER');
  const tier = (await p.gateway.ops('GET', `/organizations/${o.id}`)).body.data.serviceTier;
  const asked = await p.gateway.ops('POST', `/organizations/${o.id}/service-tier`, {
    headers: { authorization: `Bearer ${underwriter.accessToken}` },
    body: { serviceTier: tier === 'DETERMINATION' ? 'DETERMINATION_AND_SETTLEMENT' : 'DETERMINATION' },
  });
  if (asked.status !== 202) throw new Error(`asking for the sweep's approval: ${asked.status}`);
  approvalId = asked.body.data.approval.id;
  baseline = await quiet();
}, 90_000);

afterAll(async () => {
  await p?.stop();
  await mongo?.close();
});

/**
 * `POST /ops/auth/token` is no contract route (docs/decisions.md, "Ops machine clients"): it
 * answers OAuth 2.0's shapes (RFC 6749, section 5.2), not the envelope, so standard client libraries
 * work. Bad input there is refused in that shape, never a 5xx, and writes nothing.
 */
it('refuses bad token requests in the RFC 6749 error shape, never a 5xx', async () => {
  const cases: Array<{ type: string; body: string; auth?: string }> = [
    { type: 'application/x-www-form-urlencoded', body: '' },
    { type: 'application/x-www-form-urlencoded', body: 'grant_type=client_credentials' },
    { type: 'application/x-www-form-urlencoded', body: 'grant_type=client_credentials&grant_type=password' },
    { type: 'application/x-www-form-urlencoded', body: 'grant_type=%ZZ' },
    {
      type: 'application/x-www-form-urlencoded',
      body: `grant_type=client_credentials&client_id=${'x'.repeat(5000)}`,
    },
    {
      type: 'application/x-www-form-urlencoded',
      body: 'grant_type=client_credentials',
      auth: `Basic ${Buffer.from('%ZZ:%').toString('base64')}`,
    },
    { type: 'application/x-www-form-urlencoded', body: 'grant_type=client_credentials', auth: 'Basic !!!' },
    { type: 'application/json', body: '{"grant_type":"client_credentials"}' },
    { type: 'text/plain', body: 'grant_type=client_credentials' },
  ];
  for (const c of cases) {
    const res = await fetch(`${p.gateway.gateway.opsUrl}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': c.type, ...(c.auth ? { authorization: c.auth } : {}) },
      body: c.body,
    });
    const body = (await res.json()) as Record<string, unknown>;
    expect({
      case: c,
      status: res.status >= 400 && res.status < 500,
      keys: Object.keys(body).sort(),
    }).toEqual({
      case: c,
      status: true,
      keys: ['error', 'error_description'],
    });
  }
  expect(await quiet()).toEqual(baseline);
});

it('sweeps every route of both documents', () => {
  expect(sweptRoutes.length).toBeGreaterThan(60);
  for (const swept of sweptRoutes) expect(() => realParams(swept.route, swept.api)).not.toThrow();
});

it('starts from valid bodies (so each damage is what makes a request invalid)', () => {
  for (const { route } of sweptRoutes.filter((s) => s.route.body)) {
    const result = route.body?.safeParse(validBody(route));
    expect([route.operationId, result?.success, result?.error?.issues]).toEqual([
      route.operationId,
      true,
      undefined,
    ]);
  }
});

it.each(sweptRoutes.map((s) => [`${s.api} ${s.route.method.toUpperCase()} ${s.route.path}`, s] as const))(
  '%s: hostile input is refused in the envelope, never a 5xx, and nothing is written',
  async (_name, swept) => {
    const { route } = swept;
    const base = swept.api === 'ops' ? p.gateway.gateway.opsUrl : p.gateway.gateway.partnerUrl;
    await fc.assert(
      fc.asyncProperty(casesFor(swept), async (c) => {
        fc.pre(c.verdict.expect !== 'valid');
        const path = `${c.path}${c.query ? `?${c.query}` : ''}`;
        const answer = await send(base, route.method.toUpperCase(), path, c.headers, c.body.body);
        checkAgainstDocument(
          route.method,
          `${base}${path.split('?')[0]}`,
          answer.status,
          answer.contentType,
          answer.body,
        );
        const after = await snapshot();
        // The ops audit trail records every ops call that was accepted, the batch door's too
        // when it answers 200 with every item refused: that entry records the call, it is not a
        // change the input made. A refusal still leaves no trace there either.
        const written = changes(baseline, after).filter(
          (change) => !(swept.api === 'ops' && answer.status < 300 && /\.ops_audit: /.test(change)),
        );
        if (swept.api === 'ops' && answer.status < 300) baseline = after;
        // A read that answered may have been served; a refused write must leave no trace.
        const problems = problemsWith(route, c, answer, written);
        if (problems.length) {
          baseline = await quiet();
          throw new Error(
            [
              `${swept.api} ${route.method.toUpperCase()} ${route.path} (${route.operationId})`,
              `input (${c.part}): ${c.label}`,
              `request: ${route.method.toUpperCase()} ${path.slice(0, 300)}`,
              `headers: ${JSON.stringify(c.headers).slice(0, 300)}`,
              `body: ${String(c.body.body instanceof Buffer ? c.body.body.toString('hex') : c.body.body).slice(0, 500)}`,
              `expected: ${c.verdict.expect} (${c.verdict.why})`,
              `answer: ${answer.status} ${answer.text.slice(0, 500)}`,
              ...problems.map((p) => `problem: ${p}`),
            ].join('\n'),
          );
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  },
  Math.max(120_000, RUNS * 1_000),
);

/**
 * Damage that leaves a body valid (odd unicode, far dates, bounds, stripped keys) reaches the
 * handlers: no 5xx there either, and a refusal (a business rule, a conflict) writes nothing.
 * Accepted writes change state (waited for, then the new state at rest is the baseline), so
 * this runs after the sweep, and in `npm test` only a few times per route.
 */
const EDGE_RUNS = Number(process.env.FUZZ_EDGE_RUNS ?? (FUZZ_RUNS ? Math.ceil(FUZZ_RUNS / 10) : 1));
if (FUZZ_RUNS || process.env.FUZZ_SEED) {
  process.stdout.write(`bad-input sweep: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} FUZZ_EDGE_RUNS=${EDGE_RUNS}\n`);
}
const writesWithBodies = sweptRoutes.filter((s) => s.route.body && s.route.method !== 'get');

it.each(
  writesWithBodies.map((s) => [`${s.api} ${s.route.method.toUpperCase()} ${s.route.path}`, s] as const),
)(
  '%s: valid edge values never cause a 5xx, and a refusal writes nothing',
  async (_name, swept) => {
    const { route } = swept;
    const base = swept.api === 'ops' ? p.gateway.gateway.opsUrl : p.gateway.gateway.partnerUrl;
    const path = fill(route.path, realParams(route, swept.api));
    const headers: Record<string, string> =
      swept.api === 'ops'
        ? { authorization: `Bearer ${OPS_TOKEN}` }
        : route.auth === 'partner'
          ? { 'x-api-key': o.apiKey }
          : {};
    const stillValid = (b: BodyCase) =>
      judgeBody(route, b, swept.api === 'ops' ? MAX_OPS_BODY_BYTES : MAX_BODY_BYTES).expect === 'valid' &&
      b.contentType === undefined &&
      b.contentEncoding === undefined;
    // A body of one enum (a role, a tier) has no damage that leaves it valid.
    if (!fc.sample(hostileBodies(validBody(route)), { seed: SEED, numRuns: 2_000 }).some(stillValid)) return;
    await fc.assert(
      fc.asyncProperty(hostileBodies(validBody(route)), async (b) => {
        fc.pre(stillValid(b));
        const answer = await send(
          base,
          route.method.toUpperCase(),
          path,
          { ...headers, 'content-type': 'application/json' },
          b.body,
        );
        checkAgainstDocument(route.method, `${base}${path}`, answer.status, answer.contentType, answer.body);
        const c: Case = {
          part: 'body',
          label: b.label,
          path,
          query: '',
          body: b,
          headers,
          verdict: { expect: 'noop', why: 'valid' },
        };
        const accepted = answer.status < 400;
        const written = accepted ? [] : changes(baseline, await snapshot());
        const problems = problemsWith(route, c, answer, written);
        // What an accepted write set going (events, deliveries, jobs) settles into the new baseline.
        if (accepted || problems.length) baseline = await quiet();
        if (problems.length) {
          throw new Error(
            [
              `${swept.api} ${route.method.toUpperCase()} ${route.path} (${route.operationId})`,
              `input: ${b.label}`,
              `body: ${String(b.body).slice(0, 500)}`,
              `answer: ${answer.status} ${answer.text.slice(0, 500)}`,
              ...problems.map((p) => `problem: ${p}`),
            ].join('\n'),
          );
        }
      }),
      { seed: SEED, numRuns: EDGE_RUNS, endOnFailure: true, maxSkipsPerRun: 1_000 },
    );
  },
  Math.max(120_000, EDGE_RUNS * 5_000),
);

it('notices a write (the comparison is not blind), in any service’s database', async () => {
  const before = await quiet();
  const databases = new Set([...before.keys()].map((name) => name.split('_')[1]));
  expect([...databases].sort()).toEqual(['determinations', 'gateway', 'payments', 'policy', 'webhooks']);
  const plot = await p.gateway.api('POST', '/plots', { key: o.apiKey, body: plotBody(o.farmerId) });
  expect(plot.status).toBe(201);
  expect(changes(before, await snapshot()).length).toBeGreaterThan(0);
});
