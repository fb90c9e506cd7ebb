import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OPS_ROUTES } from '@parametric/contracts';
import type { RouteContract } from '@parametric/http';
import { freePort } from '@parametric/local-process';
import { createLogger, type Logger } from '@parametric/logger';
import {
  checkAgainstDocument,
  testMongoUrl,
  testRedisUrl,
  uniqueDatabaseName,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import mongoose from 'mongoose';
import type { Clock } from '../src/clock';
import { type GatewayConfig, gatewayConfigSchema } from '../src/config';
import { type RunningGateway, startGateway } from '../src/gateway';

export const OPS_TOKEN = 'test-ops-token-0123456789abcdef';

/** Gateway config for a test file: its own database and Redis prefix, ports chosen by the OS. */
export function testConfig(overrides: Record<string, string> = {}): GatewayConfig {
  return gatewayConfigSchema.parse({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: '0',
    OPS_HOST: '127.0.0.1',
    OPS_PORT: '0',
    MONGO_URL: testMongoUrl(),
    MONGO_DB: uniqueDatabaseName('gateway'),
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: uniqueRedisPrefix('gateway'),
    OPS_TOKEN,
    INTERNAL_SIGNING_SECRET: 'test-internal-signing-secret-0123',
    API_KEY_PEPPER: 'test-api-key-pepper-0123456789',
    OUTBOX_POLL_MS: '60000',
    ...overrides,
  });
}

/**
 * The environment of a gateway run as its own process (`services/gateway/src/main.ts`), for
 * tests that signal or kill it: the test's MongoDB and Redis, its own database and prefix.
 */
export async function gatewayProcessEnv(port: number, dbName: string): Promise<Record<string, string>> {
  return {
    NODE_ENV: 'test',
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: String(port),
    OPS_HOST: '127.0.0.1',
    OPS_PORT: String(await freePort()),
    MONGO_URL: testMongoUrl(),
    MONGO_DB: dbName,
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: uniqueRedisPrefix('gateway_process'),
    OPS_TOKEN,
    INTERNAL_SIGNING_SECRET: 'test-internal-signing-secret-0123',
    API_KEY_PEPPER: 'test-api-key-pepper-0123456789',
    REGISTRATION_LIMIT_POINTS: '100000',
  };
}

// biome-ignore lint/suspicious/noExplicitAny: replies are arbitrary JSON that assertions walk into
export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface CallOptions {
  key?: string;
  /** A dashboard access token, sent as `Authorization: Bearer`. */
  token?: string;
  body?: unknown;
  /** Sent as-is (no JSON encoding). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  /**
   * Skip the check against the OpenAPI document: only for answers of a stand-in service (the
   * forwarding tests' echo server), which are not the platform's responses.
   */
  fromStandIn?: boolean;
}

/** One HTTP request over a real socket; JSON bodies in and out. */
export async function call(method: string, url: string, options: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  if (!options.fromStandIn) {
    checkAgainstDocument(method, url, res.status, res.headers.get('content-type') ?? '', parsed);
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

export interface TestGateway {
  gateway: RunningGateway;
  config: GatewayConfig;
  /** Partner API: `api('GET', '/organizations/me', { key })`. */
  api(method: string, path: string, options?: CallOptions): Promise<Reply>;
  /** Ops API with the ops token: `ops('POST', '/organizations/:id/kyb', { body })`. */
  ops(method: string, path: string, options?: CallOptions): Promise<Reply>;
  /** Registers an organization and returns its id and key. */
  register(
    overrides?: Record<string, unknown>,
    // biome-ignore lint/suspicious/noExplicitAny: the organization as JSON, walked by assertions
  ): Promise<{ id: string; apiKey: string; apiSecret: string; organization: any }>;
  /** A direct connection to the gateway's database, for asserting what was (not) written. */
  db: mongoose.Connection;
  stop(): Promise<void>;
}

let registrations = 0;
let invitations = 0;

/** A password that passes the platform's rules. */
export const GOOD_PASSWORD = 'maize-harvest-2026-long';

export interface SignedInUser {
  userId: string;
  email: string;
  password: string;
  accessToken: string;
  refreshToken: string;
}

/**
 * A dashboard user of the organization with `role`, as a person gets one: invited with the
 * organization's key, invitation accepted, signed in.
 */
export async function signInAs(
  gateway: Pick<TestGateway, 'api'>,
  apiKey: string,
  role: 'ORG_ADMIN' | 'ORG_OPERATOR' | 'ORG_FINANCE' | 'ORG_VIEWER',
): Promise<SignedInUser> {
  invitations++;
  const email = `user-${invitations}-${Date.now()}@example.org`;
  const invited = await gateway.api('POST', '/organizations/me/users', {
    key: apiKey,
    body: { email, name: `User ${invitations}`, role },
  });
  if (invited.status !== 201) throw new Error(`invitation failed: ${JSON.stringify(invited.body)}`);
  const accepted = await gateway.api('POST', '/auth/accept-invitation', {
    body: { token: invited.body.data.invitationToken, password: GOOD_PASSWORD },
  });
  if (accepted.status !== 200) throw new Error(`acceptance failed: ${JSON.stringify(accepted.body)}`);
  const login = await gateway.api('POST', '/auth/login', { body: { email, password: GOOD_PASSWORD } });
  if (login.status !== 200) throw new Error(`sign-in failed: ${JSON.stringify(login.body)}`);
  return {
    userId: invited.body.data.user.id,
    email,
    password: GOOD_PASSWORD,
    accessToken: login.body.data.accessToken,
    refreshToken: login.body.data.refreshToken,
  };
}

/**
 * A clock that runs with the machine's, and that a test moves forward: time passes for the
 * gateway (an invitation lapses, a token expires) without the test waiting for it.
 */
export function movingClock(): { now: Clock; advance(ms: number): void } {
  let aheadMs = 0;
  return {
    now: () => new Date(Date.now() + aheadMs),
    advance: (ms) => {
      aheadMs += ms;
    },
  };
}

export async function startTestGateway(
  overrides: Record<string, string> = {},
  /** The gateway's logger (silent unless a test captures what it logs). */
  logger: Logger = createLogger({ name: 'gateway-test', level: 'silent' }),
  /** Where the gateway reads the time (the machine's unless a test moves it). */
  clock?: Clock,
): Promise<TestGateway> {
  const config = testConfig({ REGISTRATION_LIMIT_POINTS: '1000', ...overrides });
  const gateway = await startGateway(config, logger, clock);
  const db = await mongoose.createConnection(config.MONGO_URL, { dbName: config.MONGO_DB }).asPromise();
  const api = (method: string, path: string, options?: CallOptions) =>
    call(method, `${gateway.partnerUrl}${path}`, options);
  const ops = (method: string, path: string, options: CallOptions = {}) =>
    call(method, `${gateway.opsUrl}${path}`, {
      ...options,
      headers: { authorization: `Bearer ${OPS_TOKEN}`, ...options.headers },
    });
  return {
    gateway,
    config,
    api,
    ops,
    db,
    register: async (body = {}) => {
      registrations++;
      const reply = await api('POST', '/auth/register-organization', {
        body: { name: `Cooperative ${registrations}`, type: 'COOPERATIVE', countryCode: 'KE', ...body },
      });
      if (reply.status !== 201) throw new Error(`registration failed: ${JSON.stringify(reply.body)}`);
      const organization = reply.body.data.organization;
      return {
        id: organization.id,
        apiKey: organization.apiKey,
        apiSecret: organization.apiSecret,
        organization,
      };
    },
    stop: async () => {
      await gateway.stop();
      await db.dropDatabase().catch(() => undefined);
      await db.close();
    },
  };
}

let operatorInvitations = 0;

export interface SignedInOperator {
  id: string;
  email: string;
  accessToken: string;
  refreshToken: string;
}

/**
 * An operator with `role`, as a person gets one: invited with the break-glass ops token (how the
 * first operator is made; docs/ops.md), invitation accepted, signed in on the ops API.
 */
export async function signInOperator(
  gateway: Pick<TestGateway, 'ops' | 'gateway'>,
  role: 'OPS_ADMIN' | 'UNDERWRITER' | 'FINANCE' | 'SUPPORT',
): Promise<SignedInOperator> {
  operatorInvitations++;
  const email = `operator-${operatorInvitations}-${Date.now()}@ops.example`;
  const invited = await gateway.ops('POST', '/operators', { body: { email, role } });
  if (invited.status !== 201) throw new Error(`operator invitation failed: ${JSON.stringify(invited.body)}`);
  const base = gateway.gateway.opsUrl;
  const accepted = await call('POST', `${base}/auth/accept-invitation`, {
    body: { token: invited.body.data.invitationToken, password: GOOD_PASSWORD },
  });
  if (accepted.status !== 200) throw new Error(`acceptance failed: ${JSON.stringify(accepted.body)}`);
  const login = await call('POST', `${base}/auth/login`, { body: { email, password: GOOD_PASSWORD } });
  if (login.status !== 200) throw new Error(`operator sign-in failed: ${JSON.stringify(login.body)}`);
  return {
    id: invited.body.data.operator.id,
    email,
    accessToken: login.body.data.accessToken,
    refreshToken: login.body.data.refreshToken,
  };
}

/** A stand-in for a platform service (an express app built by the test) on a free port. */
export async function serveStandIn(app: {
  listen(port: number, host: string, done: () => void): Server;
}): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Every ops route that needs a caller, from the contracts: the rows of the role and scope tables. */
export const GUARDED_OPS_ROUTES = (Object.values(OPS_ROUTES).flat() as RouteContract[]).filter(
  (route) => route.auth !== 'none',
);

/**
 * Calls every guarded ops route once with `token` and no body (a route the caller may call then
 * answers 400 or 404 for the random ids, and changes nothing). `actual` is what happened,
 * `expected` what the table of `capabilities` says: `403` naming the capability `role` lacks, or
 * not refused; never `401`.
 */
export async function opsCapabilityOutcomes(
  opsUrl: string,
  token: string,
  role: string,
  capabilities: readonly string[],
  options: { fromStandIn?: boolean } = {},
) {
  const sample = (path: string) =>
    path
      .replace('{policyNumber}', 'KE-202611-7K3Q9X')
      .replace(/\{[^}]+\}/g, '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d');
  const allowed = (route: RouteContract) => capabilities.includes(route.capability as string);
  const actual = [];
  for (const route of GUARDED_OPS_ROUTES) {
    const reply = await call(route.method.toUpperCase(), `${opsUrl}${sample(route.path)}`, {
      headers: { authorization: `Bearer ${token}` },
      ...options,
    });
    actual.push({
      route: route.operationId,
      refused: reply.status === 403 && reply.body?.error?.code === 'FORBIDDEN',
      message: allowed(route) ? undefined : reply.body?.error?.message,
      unauthenticated: reply.status === 401,
    });
  }
  const expected = GUARDED_OPS_ROUTES.map((route) => ({
    route: route.operationId,
    refused: !allowed(route),
    message: allowed(route)
      ? undefined
      : `Your role ${role} lacks the capability ${route.capability} this endpoint needs`,
    unauthenticated: false,
  }));
  return { actual, expected };
}

/**
 * An OpenID Connect issuer for single sign-on tests: the discovery document and a JWKS of a key
 * made for the test, on a free port, and a way to sign tokens with that key.
 */
export async function startOidcIssuer() {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-issuer-key', alg: 'ES256', use: 'sig' };
  let issuer = '';
  const server = createServer((req, res) => {
    const documents: Record<string, unknown> = {
      '/.well-known/openid-configuration': { issuer, jwks_uri: `${issuer}/jwks` },
      '/jwks': { keys: [jwk] },
    };
    const document = documents[req.url ?? ''];
    res.writeHead(document ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(document ?? {}));
  });
  const stand = await serveStandIn({ listen: (port, host, done) => server.listen(port, host, done) });
  issuer = stand.url;
  return {
    issuer,
    /** A token of this issuer for `audience`, valid for 5 minutes unless `claims` say otherwise. */
    sign: (audience: string, claims: JWTPayload) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iat: now, exp: now + 300, ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: jwk.kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(audience)
        .sign(privateKey);
    },
    close: stand.close,
  };
}
