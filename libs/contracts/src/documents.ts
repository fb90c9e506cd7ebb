import { openApiDocument, type RouteContract } from '@parametric/http';
import { APPROVAL_ROUTES } from './approvals';
import { determinationIngestInput } from './determinations/ingest';
import { DETERMINATION_OPS_ROUTES, DETERMINATION_ROUTES } from './determinations/routes';
import { webhookEvents } from './events';
import { GATEWAY_ROUTES, META_ROUTES } from './gateway';
import { OPERATOR_ROUTES } from './operators';
import { GATEWAY_OPS_ROUTES, getOpsOpenApiDocument, POLICY_OPS_ROUTES } from './ops';
import { OPS_CLIENT_ROUTES } from './ops-clients';
import { PAYOUT_OPS_ROUTES, PAYOUT_ROUTES } from './payments/payouts';
import { PREMIUM_ROUTES } from './payments/premiums';
import { QUOTE_ROUTES } from './payments/quotes';
import { bulkRow, FARMER_ROUTES } from './policy/farmers';
import { POLICY_ROUTES } from './policy/policies';
import { USER_ROUTES } from './users';
import { WEBHOOK_ROUTES } from './webhooks';

/** Which service serves a route; the gateway serves its own and forwards the rest. */
export type ServiceName = 'gateway' | 'policy' | 'payments' | 'determinations' | 'webhooks';

/** Every partner route, by the service that serves it. */
export const PARTNER_ROUTES: Readonly<Record<ServiceName, readonly RouteContract[]>> = {
  gateway: [...GATEWAY_ROUTES, ...USER_ROUTES, ...META_ROUTES],
  policy: [...FARMER_ROUTES, ...POLICY_ROUTES],
  payments: [...PREMIUM_ROUTES, ...QUOTE_ROUTES, ...PAYOUT_ROUTES],
  determinations: DETERMINATION_ROUTES,
  webhooks: WEBHOOK_ROUTES,
};

/** Every ops route, by the service that serves it. */
export const OPS_ROUTES: Readonly<Record<ServiceName, readonly RouteContract[]>> = {
  gateway: [
    ...GATEWAY_OPS_ROUTES,
    ...OPERATOR_ROUTES,
    ...OPS_CLIENT_ROUTES,
    ...APPROVAL_ROUTES,
    getOpsOpenApiDocument,
  ],
  policy: POLICY_OPS_ROUTES,
  payments: PAYOUT_OPS_ROUTES,
  determinations: DETERMINATION_OPS_ROUTES,
  webhooks: [],
};

const all = (routes: Readonly<Record<ServiceName, readonly RouteContract[]>>) => Object.values(routes).flat();

const PARTNER_DESCRIPTION = `Parametric crop and livestock insurance for partner organizations: onboard farmers, register plots and herds, buy policies, activate them, and receive signed events.

Every call carries \`x-api-key\` (except registration, the dashboard sign-in routes and these docs); the dashboard sends a user's bearer token instead. Responses use the envelopes \`{ success: true, data }\`, \`{ success: true, data: [...], pagination }\` and \`{ success: false, error: { code, message, details? } }\`; branch on \`error.code\`. Query parameters an operation does not list, or one given more than once (\`status[]=X\`, \`status=A&status=B\`), are \`400 INVALID_INPUT\` naming them. Ids are uuids in any case (\`3F2B…\` is \`3f2b…\`); we write them in lower case. Limits: 100 requests per 60 s per organization, whichever key or dashboard user sends them; what needs no key (these docs, sign-in, the signing keys, \`OPTIONS\`) is limited per client address (headers \`X-RateLimit-*\` on every response). The partner's guide is docs/api.md in the platform repository.`;

/**
 * The interface version both documents carry as `info.version`, and the heading of its entry in
 * CHANGELOG.md. Its major changes with every breaking change of either document: the snapshot
 * test (test/unit/openapi-snapshot.test.ts) refuses a breaking change without it (docs/api.md,
 * "Versioning"; docs/decisions.md, "A record of API changes").
 */
export const API_VERSION = '1.0.0';

let partner: ReturnType<typeof openApiDocument> | undefined;
let ops: ReturnType<typeof openApiDocument> | undefined;

/** The partner API document (built once; the declarations do not change at run time). */
export function partnerDocument() {
  partner ??= openApiDocument({
    title: 'Parametric insurance partner API',
    version: API_VERSION,
    description: PARTNER_DESCRIPTION,
    serverUrl: '/api',
    routes: all(PARTNER_ROUTES),
    securitySchemes: {
      apiKey: {
        type: 'apiKey',
        in: 'header',
        name: 'x-api-key',
        description:
          'Your organization’s API key: server-side only; rotate on exposure. It acts as `ORG_ADMIN`.',
      },
      dashboardBearer: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          'A dashboard user’s access token from `POST /auth/login` (15 minutes, `aud: "dashboard"`): for the dashboard only, never for server-to-server integrations. Acts with the user’s role. Never send it together with `x-api-key`.',
      },
      webhookSignature: {
        type: 'apiKey',
        in: 'header',
        name: 'x-service-signature',
        description:
          'How you authenticate our webhook deliveries: HMAC-SHA256 with your webhook secret over `{x-service-timestamp}.{raw body}`, lowercase hex (docs/webhooks.md).',
      },
    },
    webhooks: webhookEvents(),
    schemas: { BulkImportRow: bulkRow },
  });
  return partner;
}

/** The ops API document (served on the ops port only). */
export function opsDocument() {
  ops ??= openApiDocument({
    title: 'Parametric insurance ops API',
    version: API_VERSION,
    description:
      'Admin actions partners cannot take themselves: KYB, service tier, (de)activation, key rotation, farmer KYC, licences and capacity, policy lookup, determination ingestion. Bearer: an operator’s access token (`POST /ops/auth/login`), each route needing the capability it names (`x-capability`), which the operator’s role grants; the shared `OPS_TOKEN` is break-glass. Never a partner key. See docs/ops.md.',
    serverUrl: '/ops',
    routes: all(OPS_ROUTES),
    securitySchemes: {
      opsBearer: {
        type: 'http',
        scheme: 'bearer',
        description: 'An operator access token (or the break-glass ops token)',
      },
    },
    schemas: { DeterminationIngest: determinationIngestInput },
  });
  return ops;
}
