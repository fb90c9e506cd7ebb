import { OPS_ROUTES, PARTNER_ROUTES } from '@parametric/contracts';
import { answerOptions, MAX_OPS_BODY_BYTES, mountRoutes, OPS_CAPABILITIES } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { routeTemplates } from '@parametric/metrics';
import { openQueues } from '@parametric/queue';
import {
  type ServiceDeclaration,
  type ServiceKit,
  type ServiceParts,
  startService,
} from '@parametric/runtime';
import { type Express, type NextFunction, type Request, type Response, Router } from 'express';
import type { Redis } from 'ioredis';
import { createApiKeys } from './api-keys/domain';
import { createApprovals } from './approvals/domain';
import { type AskOpsService, actionExecutor } from './approvals/execute';
import { fourEyesGate } from './approvals/gate';
import { needsApprovalOf } from './approvals/needs-approval';
import { approvalRoutes } from './approvals/routes';
import { auditRoutes } from './audit/routes';
import { recordApprovedAction, recordOpsActions } from './audit/trail';
import { beforeBody } from './auth/before-body';
import { capabilityGuards, requireCapability } from './auth/capabilities';
import { dashboardCookie } from './auth/dashboard-cookie';
import { ssoVerifier } from './auth/oidc';
import { auditActorOf, authenticateOps, opsCallerOf } from './auth/ops-caller';
import { authenticate, principalCache, principalOf, requirePrincipalCounting } from './auth/principal';
import { sessionCookies } from './auth/queue-session';
import { type AuthVersions, authVersions } from './auth/versions';
import { createOpsClients } from './clients/domain';
import { opsClientRoutes } from './clients/routes';
import { tokenEndpoint } from './clients/token-endpoint';
import { type Clock, systemClock } from './clock';
import { dashboardTokenKeys, type GatewayConfig, opsOidcSettings, sandboxEnabled } from './config';
import { accessTokens, clientTokens, operatorTokens } from './credentials/access-tokens';
import { dummyHash } from './credentials/passwords';
import { DASHBOARD_PATH, dashboardAssets } from './dashboard/static';
import { docsAssets, docsRoutes, opsDocsRoutes } from './docs/routes';
import {
  askOpsService,
  FORWARDED_ROUTES,
  forwardingRoutes,
  opsForwardingRoutes,
  opsServiceOf,
  publicForwardingRoutes,
} from './forwarding/routes';
import { upstreams as createUpstreams } from './forwarding/upstreams';
import { type WebhookUrlOf, webhookUrlLookup } from './forwarding/webhook-url';
import { createOperators } from './operators/domain';
import { operatorRoutes, operatorSignInRoutes } from './operators/routes';
import { createOps } from './ops/domain';
import { QUEUE_DASHBOARD_PATH, queueDashboard } from './ops/queue-dashboard';
import { queueSignIn } from './ops/queue-sign-in';
import { opsRoutes, requireKnownOrganization } from './ops/routes';
import { createOrganizations } from './organizations/domain';
import { organizationRoutes, type PartnerContext, registrationRoutes } from './partner-routes';
import { rateLimit } from './rate-limit/limiter';
import { redisLimit } from './rate-limit/limits';
import { loginThrottle } from './rate-limit/login-throttle';
import {
  type GatewayRepositories,
  gatewayModels,
  gatewayRepositories,
  type TenantGatewayData,
} from './repositories';
import { createSessions } from './sessions/domain';
import { createUsers } from './users/domain';
import { signInRoutes, type UserRoutesContext, userRoutes } from './users/routes';

export interface RunningGateway {
  partnerUrl: string;
  opsUrl: string;
  partnerApp: Express;
  opsApp: Express;
  /** Moves recorded events to the queue now and waits (tests, shutdown). */
  drainOutbox(): Promise<void>;
  /** Graceful shutdown: HTTP servers, then the relay and producers, then Redis and MongoDB. */
  stop(): Promise<void>;
}

/**
 * Paths under `/api` where a route or limit needs no key or token lives (matched as express
 * matches them: any case, any tail); anything else skips straight to authentication.
 */
const PUBLIC_PATHS = /^\/(openapi\.json|docs|auth|\.well-known)(\/|$)/i;

/** Partner routes under a public prefix that still need a caller (`GET /auth/session`). */
const SIGNED_IN_UNDER_PUBLIC = Object.values(PARTNER_ROUTES)
  .flat()
  .filter((route) => route.auth === 'partner' && PUBLIC_PATHS.test(route.path))
  .map((route) => new RegExp(`^${route.path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`, 'i'));

/** Whether a path under `/api` is served without a key or token. */
function isAnonymousPath(path: string): boolean {
  return PUBLIC_PATHS.test(path) && !SIGNED_IN_UNDER_PUBLIC.some((route) => route.test(path));
}

/**
 * `router` for the requests `when` accepts; the others skip it without entering it. A request
 * that leaves an express router (`next('router')`, or no layer left) goes on at the next turn of
 * the event loop, a cost the hot path should not pay for routers it never needed. The router's
 * stack stays visible, so the tests that list mounted routes still see its routes.
 */
function onlyWhen(when: (req: Request) => boolean, router: Router) {
  return Object.assign(
    (req: Request, res: Response, next: NextFunction) => (when(req) ? router(req, res, next) : next()),
    { stack: router.stack },
  );
}

/** The gateway's own partner routes, refused at start-up if any lies under a forwarded prefix. */
function assertNotForwarded<B extends { contract: { path: string; operationId: string } }>(
  bindings: B[],
): B[] {
  for (const { contract } of bindings) {
    const sample = contract.path.replace(/\{[^}]+\}/g, 'x');
    if (FORWARDED_ROUTES.some((route) => route.path.test(sample)))
      throw new Error(`${contract.operationId} (${contract.path}) lies under a forwarded prefix`);
  }
  return bindings;
}

/**
 * The webhook URL lookup under the stamp a request saw. Made here rather than inline in the
 * request's context: tsx names a function written as an object literal's property with an
 * `Object.defineProperty` call each time it is made, on every request.
 */
function underStamp(lookup: WebhookUrlOf, version: string | undefined) {
  return (organizationId: string) => lookup(organizationId, version);
}

/** How long a request waits for the auth stamp check before reading MongoDB instead. */
const AUTH_REDIS_TIMEOUT_MS = 1_000;

// Served on the ops port only (`/ops/metrics`, behind the ops token). Forwarded partner and ops
// requests are answered by middleware, not an express route: their route label is the template
// of the contract they match.
const partnerTemplate = routeTemplates('/api', Object.values(PARTNER_ROUTES).flat());
const opsTemplate = routeTemplates('/ops', Object.values(OPS_ROUTES).flat());

/** The gateway's repositories, and the Redis they report authentication changes to. */
type GatewayStores = GatewayRepositories & { redis: Redis; versions: AuthVersions };

/**
 * The gateway: partner API (with `/healthz`, `/readyz`) and the ops API on its own port.
 * `clock` is where every rule, token and audit entry reads the time (tests move it).
 */
export function gatewayService(
  clock: Clock,
): ServiceDeclaration<GatewayConfig, GatewayStores, 'events', object> {
  return {
    name: 'gateway',
    async repositories(connection, { config, logger, connectRedis }) {
      // Rate limiting must not queue commands while Redis is away: fail fast, fall back to memory.
      const redis = await connectRedis('rate-limits');
      // Every gateway replica caches resolved callers; a change made here replaces the
      // organization's stamp in Redis before it is answered, so every replica reads it afresh.
      const versions = authVersions({
        redis,
        prefix: config.REDIS_PREFIX,
        timeoutMs: AUTH_REDIS_TIMEOUT_MS,
        retryForMs: config.AUTH_CACHE_MAX_AGE_SECONDS * 1000,
        logger,
      });
      return Object.assign(gatewayRepositories(connection, { authChanged: versions.invalidate }), {
        redis,
        versions,
      });
    },
    models: gatewayModels,
    produces: ['events'],
    queueStats: ['events'],
    metrics: { routeOf: (req) => partnerTemplate(req) ?? opsTemplate(req) },
    build: (kit) => buildGateway(kit, clock),
  };
}

async function buildGateway(
  { config, logger, repositories, metrics }: ServiceKit<GatewayConfig, GatewayStores, 'events'>,
  clock: Clock,
): Promise<ServiceParts<'events', object>> {
  const { redis, versions } = repositories;
  const cacheMaxAgeMs = config.AUTH_CACHE_MAX_AGE_SECONDS * 1000;
  // Authentication finds a key by its hash, and the relay moves every organization's events.
  const across = repositories.acrossOrganizations();
  const { organizations } = across;
  const rateLimitRejections = metrics.counter(
    'rate_limit_rejections_total',
    'Requests refused 429 by a rate limit, by limiter (never by organization)',
    ['limiter'],
  );
  const authFailures = metrics.counter(
    'auth_failures_total',
    'Requests refused for their credentials (partner key or token, ops token), by reason',
    ['reason'],
  );

  const window = config.RATE_LIMIT_WINDOW_SECONDS;
  const counted = (limiter: string) => {
    const child = rateLimitRejections.labels(limiter);
    return () => child.inc();
  };
  const limits = {
    partner: redisLimit(redis, config.REDIS_PREFIX, {
      name: 'partner',
      rejected: counted('partner'),
      points: config.RATE_LIMIT_POINTS,
      durationSeconds: window,
    }),
    anonymous: redisLimit(redis, config.REDIS_PREFIX, {
      name: 'anonymous',
      rejected: counted('anonymous'),
      points: config.ANONYMOUS_LIMIT_POINTS,
      durationSeconds: window,
    }),
    registration: redisLimit(redis, config.REDIS_PREFIX, {
      name: 'registration',
      rejected: counted('registration'),
      points: config.REGISTRATION_LIMIT_POINTS,
      durationSeconds: config.REGISTRATION_WINDOW_SECONDS,
    }),
    paymentsInitiate: redisLimit(redis, config.REDIS_PREFIX, {
      name: 'payments-initiate',
      rejected: counted('payments-initiate'),
      points: config.PAYMENTS_INITIATE_LIMIT_POINTS,
      durationSeconds: config.PAYMENTS_INITIATE_WINDOW_SECONDS,
    }),
  };
  const clientIp = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';

  const breakGlassRequests = metrics.counter(
    'ops_break_glass_requests_total',
    'Ops requests made with the shared ops token (break-glass; docs/ops.md), each also audited',
    [],
  );

  const pepper = config.API_KEY_PEPPER;
  const tokenKeys = dashboardTokenKeys(config);
  const tokenOptions = {
    issuer: config.DASHBOARD_TOKEN_ISSUER,
    ttlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
    clock,
  };
  const tokens = accessTokens(tokenKeys, tokenOptions);
  const loginThrottleSettings = {
    accountFailures: config.LOGIN_ACCOUNT_FAILURES,
    ipFailures: config.LOGIN_IP_FAILURES,
    windowSeconds: config.LOGIN_WINDOW_SECONDS,
  };
  // The domain modules, bound once to what they need; a request hands them a tenant and its input.
  const apiKeys = createApiKeys({ pepper, clock });
  const sessions = createSessions({
    across,
    tenantOf: repositories.forOrganization,
    pepper,
    accessTokens: tokens,
    refreshTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
    throttle: loginThrottle(redis, config.REDIS_PREFIX, loginThrottleSettings),
    dummyHash: await dummyHash(),
    logger,
    clock,
  });
  const users = createUsers({
    pepper,
    invitationTtlSeconds: config.INVITATION_TTL_SECONDS,
    repositories,
    clock,
  });
  const organizationDomain = createOrganizations({
    repositories,
    pepper,
    users,
    clock,
    sandboxEnabled: sandboxEnabled(config),
  });
  const operators = createOperators({
    ...repositories.operatorData(),
    pepper,
    invitationTtlSeconds: config.INVITATION_TTL_SECONDS,
    refreshTtlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
    tokens: operatorTokens(tokenKeys, tokenOptions),
    // Its own counters: an operator's failures never lock a dashboard user of the same email out.
    throttle: loginThrottle(redis, `${config.REDIS_PREFIX}ops:`, loginThrottleSettings),
    dummyHash: await dummyHash(),
    logger,
    clock,
  });
  const opsClients = createOpsClients({
    clients: repositories.opsClients(),
    pepper,
    tokens: clientTokens(tokenKeys, tokenOptions),
    // Failed client authentications on their own counters, keyed by client id and address.
    throttle: loginThrottle(redis, `${config.REDIS_PREFIX}ops-client:`, loginThrottleSettings),
    logger,
    clock,
  });
  const oidc = opsOidcSettings(config);
  const sso = oidc ? ssoVerifier(oidc, clock) : undefined;
  const ops = createOps({ clock });
  const upstreams = createUpstreams({ connections: config.FORWARD_CONNECTIONS });
  const webhookUrlOf = webhookUrlLookup({
    webhooksUrl: config.WEBHOOKS_URL,
    signingSecret: config.INTERNAL_SIGNING_SECRET,
    logger,
    upstreams,
    cache: { maxEntries: config.AUTH_CACHE_MAX_ENTRIES, maxAgeMs: cacheMaxAgeMs },
  });

  const forwarding = {
    serviceUrls: {
      policy: config.POLICY_URL,
      payments: config.PAYMENTS_URL,
      determinations: config.DETERMINATIONS_URL,
      webhooks: config.WEBHOOKS_URL,
    },
    signingSecret: config.INTERNAL_SIGNING_SECRET,
    timeoutMs: config.FORWARD_TIMEOUT_MS,
    logger,
    upstreams,
    webhookUrlChanged: versions.invalidate,
  };

  const ipLimit = (limit: typeof limits.anonymous) =>
    rateLimit((req) => [{ limit, key: `ip:${clientIp(req)}` }], logger);
  // Every limit is taken, and every credential resolved, before a body is read: a refused or
  // anonymous flood costs no decompression or JSON parsing (issue 14, row 4).
  const early = beforeBody({
    // Registration is limited per client IP (there is no key yet).
    registration: ipLimit(limits.registration),
    // What needs no key or token (dashboard sign-in, whose failures are also counted per
    // account; the signing keys; the OpenAPI document and docs page; OPTIONS): per client IP,
    // on the budget a caller without a valid key spends, so every answer carries X-RateLimit-*.
    anonymous: ipLimit(limits.anonymous),
    isAnonymousPath,
    // Anything else needs a key or token: resolved and counted (anonymous callers by client
    // IP), then refused without one, or without the route's capability.
    caller: [
      authenticate({
        pepper,
        across,
        accessTokens: tokens,
        cache: principalCache(config.AUTH_CACHE_MAX_ENTRIES, cacheMaxAgeMs),
        versions,
        limits,
        clientIp,
        logger,
        clock,
      }),
      requirePrincipalCounting((reason) => authFailures.inc({ reason })),
      requireCapability(),
    ],
  });

  const mountPartner = (partnerApp: Express) => {
    partnerApp.set('trust proxy', config.TRUST_PROXY_HOPS);
    // The dashboard's static files (docs/dashboard.md): a browser app of the public API, no back door.
    partnerApp.use(DASHBOARD_PATH, dashboardAssets(config.DASHBOARD_DIR));
    // What needs no key or token, under `/api`, in one router that every other request leaves at
    // its first layer: the key path does not walk a dozen routers that cannot match it.
    const publicApi = Router();
    publicApi.use(answerOptions(Object.values(PARTNER_ROUTES).flat()));
    publicApi.use(
      mountRoutes(Router(), docsRoutes, () => undefined),
      docsAssets(),
    );
    const anonymousContext = { organizations: organizationDomain };
    publicApi.use(mountRoutes(Router(), registrationRoutes, () => anonymousContext));
    publicApi.use(
      mountRoutes(Router(), signInRoutes, (req) => ({
        sessions,
        users,
        clientIp: clientIp(req),
        cookie: dashboardCookie(req, { production: config.NODE_ENV === 'production' }),
      })),
    );
    publicApi.use(publicForwardingRoutes(forwarding));
    // Both under one `/api` mount: express takes the prefix off a request's URL when it enters a
    // mount and puts it back when it leaves, and each change of the URL costs the next path read
    // a fresh parse of it (parseurl keeps one per request), so a second mount cost the key path
    // two more parses.
    const api = Router();
    api.use(onlyWhen((req) => req.method === 'OPTIONS' || PUBLIC_PATHS.test(req.path), publicApi));
    // The caller's routes: reached only with a caller resolved before the body was read (an
    // anonymous path or an OPTIONS request that nothing above answered is a 404).
    const callerApi = Router();
    api.use(onlyWhen((req) => req.principal !== undefined, callerApi));
    partnerApp.use('/api', api);
    // Forwarded requests first, by their path's prefix (one test of a few expressions), so they
    // do not walk the gateway's own routes; no own route lies under a forwarded prefix (checked
    // below), so which comes first decides nothing else.
    callerApi.use(forwardingRoutes(forwarding));
    // The gateway's own routes on `callerApi` itself, not in a router of their own: a request
    // that leaves a router without an answer goes on only at the next turn of the event loop.
    mountRoutes<PartnerContext & UserRoutesContext>(
      callerApi,
      assertNotForwarded([...organizationRoutes, ...userRoutes]),
      (req) => {
        const principal = principalOf(req);
        let tenant: TenantGatewayData | undefined;
        return {
          principal,
          // Made when a handler asks: reads of the caller (GET /organizations/me, /auth/session) never do.
          get tenant() {
            tenant ??= repositories.forOrganization(principal.organization._id);
            return tenant;
          },
          organizations: organizationDomain,
          apiKeys,
          users,
          // Under the stamp this request saw, so a cached URL is only used while it holds.
          webhookUrlOf: underStamp(webhookUrlOf, req.authVersion),
        };
      },
    );
  };

  const audit = repositories.opsAudit();
  const auditContext = { audit };
  const opsContext = {
    repositories,
    ops,
    apiKeys,
    // Asked afresh on every ops read (no stamp): ops reads are rare, and this is the partner view's lookup.
    webhookUrlOf: (organizationId: string) => webhookUrlOf(organizationId),
  };
  const ask =
    (service: 'policy' | 'payments' | 'determinations' | 'webhooks') =>
    async (request: Parameters<AskOpsService>[0]) =>
      askOpsService(forwarding, { ...request, service });
  const askServiceOf: AskOpsService = (request) => {
    const service = opsServiceOf(request.path.split('?')[0] ?? '');
    if (!service) throw new Error(`no service serves the ops path ${request.path}`);
    return ask(service)(request);
  };
  const approvals = createApprovals({
    store: repositories.approvals(),
    clock,
    ttlMs: config.OPS_APPROVAL_TTL_HOURS * 3_600_000,
    // Past every wait of carrying the action out (the forwarding timeout), with room to spare.
    leaseMs: 2 * config.FORWARD_TIMEOUT_MS,
    execute: actionExecutor({ repositories, ops, ask: askServiceOf }),
    audited: (approval, outcome, requestId) =>
      recordApprovedAction(audit, {
        at: clock(),
        approval: {
          id: approval._id,
          requestedBy: approval.requestedBy,
          approvedBy: approval.decidedBy ?? approval.requestedBy,
        },
        action: approval.action,
        method: approval.method,
        path: approval.path,
        organizationId: approval.organizationId,
        targetId: approval.params.id ?? null,
        status: outcome.kind === 'unavailable' ? 503 : outcome.status,
        requestId,
        request: approval.request,
        after: outcome.kind === 'done' ? outcome.data : null,
      }).catch((err: unknown) =>
        logger.error(
          { err, approval: approval._id, requestId },
          'audit entry of an approved action not written',
        ),
      ),
  });
  const inspected = openQueues({
    connection: config.REDIS_URL,
    prefix: config.REDIS_PREFIX,
    onError: (err: Error) => logger.warn({ err: err.message }, 'queue dashboard: Redis error'),
  });
  // The dashboard's session cookies (docs/decisions.md, "The queue dashboard's sign-in").
  const queueCookies = sessionCookies({
    path: QUEUE_DASHBOARD_PATH,
    production: config.NODE_ENV === 'production',
  });
  const mountOps = (opsApp: Express) => {
    opsApp.use(
      QUEUE_DASHBOARD_PATH,
      queueDashboard({
        queues: inspected.queues,
        writable: config.QUEUE_DASHBOARD_WRITABLE,
        audit,
        actorOf: (req) => auditActorOf(opsCallerOf(req)),
        logger,
        clock,
      }),
    );
    opsApp.use(
      '/ops',
      recordOpsActions({
        audit,
        organizationView: (organizationId) => ops.view(repositories.forOrganization(organizationId)),
        actorOf: (req) => auditActorOf(opsCallerOf(req)),
        logger,
        clock,
      }),
      answerOptions(Object.values(OPS_ROUTES).flat()),
      // Before the routes that carry gated actions out, here and forwarded (docs/ops.md, "Four eyes").
      fourEyesGate({
        approvals,
        callerOf: opsCallerOf,
        needsApproval: needsApprovalOf({
          repositories,
          ops,
          ask: askServiceOf,
          capacityThreshold: config.OPS_APPROVAL_CAPACITY_THRESHOLD,
        }),
      }),
      mountRoutes(Router(), approvalRoutes, (req) => ({
        approvals,
        caller: opsCallerOf(req),
        requestId: String(req.id),
      })),
      mountRoutes(Router(), opsDocsRoutes, () => undefined),
      mountRoutes(Router(), auditRoutes, () => auditContext),
      mountRoutes(Router(), operatorSignInRoutes, (req) => ({ operators, clientIp: clientIp(req) })),
      mountRoutes(Router(), operatorRoutes, (req) => ({ operators, caller: opsCallerOf(req) })),
      mountRoutes(Router(), opsClientRoutes, () => ({ clients: opsClients })),
      mountRoutes(Router(), opsRoutes, () => opsContext),
    );
    // Underwriting lives in the policy service, which cannot tell whether an organization exists.
    opsApp.use(
      ['licences', 'capacity', 'underwriting'].map((section) => `/ops/organizations/:id/${section}`),
      requireKnownOrganization(repositories, ops),
    );
    opsApp.use('/ops', opsForwardingRoutes(forwarding));
  };

  return {
    relays: [{ events: organizations }],
    listeners: [
      {
        name: 'partner',
        port: config.GATEWAY_PORT,
        host: config.GATEWAY_HOST,
        app: { beforeBody: [early] },
        mount: mountPartner,
      },
      {
        name: 'ops',
        port: config.OPS_PORT,
        host: config.OPS_HOST,
        // The determination batch door takes up to 1,000 assessments in one body.
        // The caller and the route's capability are checked before a body (up to 16 MiB) is read.
        app: {
          maxBodyBytes: MAX_OPS_BODY_BYTES,
          deadlineMs: config.OPS_REQUEST_DEADLINE_MS,
          beforeBody: [
            Router().use(
              '/ops',
              // OAuth 2.0 (form body, RFC 6749 answers): before the caller and the JSON body reader.
              tokenEndpoint({ clients: opsClients, clientIp }),
              // The dashboard's sign-in form (a form body, HTML answers): before the caller too.
              queueSignIn({ path: '/queues', operators, cookies: queueCookies, clientIp }),
              authenticateOps({
                opsToken: config.OPS_TOKEN,
                breakGlassAllowed: config.NODE_ENV !== 'production' || config.OPS_BREAK_GLASS,
                operators,
                clients: opsClients,
                ...(sso ? { sso } : {}),
                refused: (reason) => authFailures.inc({ reason }),
                breakGlassUsed: () => breakGlassRequests.inc(),
                browser: {
                  path: '/queues',
                  signIn: `${QUEUE_DASHBOARD_PATH}/sign-in`,
                  cookies: queueCookies,
                },
                clientIp,
                clock,
                scrapePath: '/metrics',
              }),
              requireCapability(capabilityGuards(Object.values(OPS_ROUTES).flat(), OPS_CAPABILITIES), null),
            ),
          ],
        },
        health: false,
        // Behind the ops token like the rest of the ops API (checked before any body).
        metricsAt: '/ops',
        mount: mountOps,
      },
    ],
    close: [{ close: () => versions.stop() }, upstreams, inspected],
    // Without Redis the gateway still serves: rate limits fall back to memory (rate-limit/),
    // authentication reads MongoDB instead of the stamps (auth/versions.ts), events wait in the
    // outbox. Every replica leaving the Service because the one Redis went away would turn a
    // degradation into an outage.
    degradesAround: { redis: async () => (await redis.ping()) === 'PONG' },
  };
}

export async function startGateway(
  config: GatewayConfig,
  logger: Logger,
  clock: Clock = systemClock,
): Promise<RunningGateway> {
  const service = await startService(gatewayService(clock), config, logger);
  const partner = service.listener('partner');
  const ops = service.listener('ops');
  return {
    partnerUrl: `${partner.url}/api`,
    opsUrl: `${ops.url}/ops`,
    partnerApp: partner.app,
    opsApp: ops.app,
    drainOutbox: service.drainOutbox,
    stop: service.stop,
  };
}
