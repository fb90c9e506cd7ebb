import { z } from 'zod';
import {
  createDocument,
  type ZodOpenApiObject,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponsesObject,
} from 'zod-openapi';
import { type Auth, errorCodesOf, type RouteContract } from './contract';
import { ERROR_STATUS, type ErrorCode } from './errors';

const fieldError = z
  .object({ field: z.string(), message: z.string() })
  .meta({ id: 'FieldError', description: 'One invalid field: its dotted path and what is wrong with it.' });

const rateLimitDetails = z
  .object({
    limit: z.number().int().meta({ description: 'Requests allowed in the window' }),
    retryAfter: z.number().int().meta({ description: 'Seconds until a request is allowed again' }),
  })
  .meta({ id: 'RateLimitDetails' });

function errorEnvelope(codes: ErrorCode[]) {
  return z.object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z
        .union([z.array(fieldError), rateLimitDetails])
        .optional()
        .meta({
          description:
            'Field errors for INVALID_INPUT and CONFLICT; `{ limit, retryAfter }` for RATE_LIMIT_EXCEEDED',
        }),
    }),
  });
}

export const paginationSchema = z
  .object({
    page: z.number().int().min(1),
    limit: z.number().int().min(1).max(100),
    total: z.number().int().min(0),
    totalPages: z.number().int().min(0),
  })
  .meta({ id: 'Pagination' });

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid input or a broken business rule',
  401: 'Missing or invalid credentials',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict with an existing resource',
  429: 'Rate limit exceeded',
  500: 'Unexpected server error',
  502: 'An upstream provider failed',
  503: 'A platform service is temporarily unavailable; retry later',
};

const RATE_LIMIT_HEADERS = z.object({
  'X-RateLimit-Limit': z.string().meta({ description: 'Requests allowed in the window' }),
  'X-RateLimit-Remaining': z.string().meta({ description: 'Requests left in the window' }),
  'X-RateLimit-Reset': z.string().meta({ description: 'Unix time (seconds) when the window resets' }),
});

const SECURITY: Record<Auth, ZodOpenApiOperationObject['security']> = {
  // Either one, never both (a request with both is 400).
  partner: [{ apiKey: [] }, { dashboardBearer: [] }],
  opsBearer: [{ opsBearer: [] }],
  none: [],
};

type StatusKey = `${1 | 2 | 3 | 4 | 5}${string}`;

function responsesOf(route: RouteContract): ZodOpenApiResponsesObject {
  // Partner routes are limited per organization, routes without a caller per client address
  // (the gateway's anonymous limit); the ops API has no rate limit.
  const headers = route.auth === 'opsBearer' ? undefined : RATE_LIMIT_HEADERS;
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    if ('contentType' in spec) {
      responses[status as StatusKey] = {
        description: spec.description,
        headers,
        content: { [spec.contentType]: { schema: z.string() } },
      };
      continue;
    }
    const schema =
      'item' in spec
        ? z.object({ success: z.literal(true), data: z.array(spec.item), pagination: paginationSchema })
        : z.object({ success: z.literal(true), data: spec.data });
    responses[status as StatusKey] = {
      description: spec.description,
      headers:
        'headers' in spec && spec.headers
          ? headers
            ? headers.extend(spec.headers.shape)
            : spec.headers
          : headers,
      content: { 'application/json': { schema } },
    };
  }
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(route)) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status) as StatusKey] = {
      description: `${STATUS_TEXT[status] ?? 'Error'}: ${codes.join(', ')}`,
      content: { 'application/json': { schema: errorEnvelope(codes) } },
    };
  }
  return responses;
}

function operationOf(route: RouteContract): ZodOpenApiOperationObject {
  const needs = route.capability ? `Needs capability \`${route.capability}\`.` : undefined;
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: [route.description, needs].filter(Boolean).join('\n\n') || undefined,
    ...(route.capability ? { 'x-capability': route.capability } : {}),
    tags: [...route.tags],
    security: SECURITY[route.auth],
    requestParams: {
      ...(route.params ? { path: route.params } : {}),
      ...(route.query ? { query: route.query } : {}),
      ...(route.headers ? { header: route.headers } : {}),
    },
    requestBody: route.body
      ? { required: !route.bodyOptional, content: { 'application/json': { schema: route.body } } }
      : undefined,
    responses: responsesOf(route),
  };
}

export interface DocumentOptions {
  title: string;
  /** `info.version`: semver; its major changes with every breaking change (docs/api.md, "Versioning"). */
  version: string;
  description: string;
  /** Where the routes' paths are rooted, e.g. `/api`. */
  serverUrl: string;
  routes: readonly RouteContract[];
  securitySchemes: NonNullable<ZodOpenApiObject['components']>['securitySchemes'];
  webhooks?: ZodOpenApiPathsObject;
  tags?: ZodOpenApiObject['tags'];
  /** Named schemas the routes refer to without embedding (e.g. rows validated one by one). */
  schemas?: Record<string, z.ZodType>;
}

/** The OpenAPI 3.1.0 document of a set of route contracts. */
export function openApiDocument(options: DocumentOptions) {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of options.routes) {
    const item = paths[route.path] ?? {};
    paths[route.path] = item;
    if (item[route.method]) throw new Error(`two routes declare ${route.method.toUpperCase()} ${route.path}`);
    item[route.method] = operationOf(route);
  }
  return createDocument({
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, description: options.description },
    servers: [{ url: options.serverUrl }],
    tags: options.tags,
    paths,
    webhooks: options.webhooks,
    components: { securitySchemes: options.securitySchemes, schemas: options.schemas },
  });
}
