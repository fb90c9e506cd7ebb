import type { z } from 'zod';
import type { Capability } from './capabilities';
import type { ErrorCode } from './errors';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * Who may call a route: a partner (its `x-api-key`, or a dashboard user's bearer token; both
 * forwarded to services as a signed context), ops with the ops bearer token, or anyone.
 */
export type Auth = 'partner' | 'opsBearer' | 'none';

/** `{ success: true, data }` with `data` of this schema. */
export interface DataResponse {
  description: string;
  data: z.ZodType;
  /** Response headers the route may set (besides the rate-limit ones), for the document. */
  headers?: z.ZodObject;
}

/** `{ success: true, data: [item…], pagination }`. */
export interface PageResponse {
  description: string;
  item: z.ZodType;
}

/** A body that is not JSON (the docs page). */
export interface RawResponse {
  description: string;
  contentType: string;
}

export type SuccessResponse = DataResponse | PageResponse | RawResponse;

/**
 * Everything a route is, in one declaration: what it accepts, what it answers, which error
 * codes it can give and who may call it. `mountRoutes` makes it validate requests and
 * `openApiDocument` makes it the documentation, so the two cannot drift apart.
 */
export interface RouteContract {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI style (`/policies/{id}`), relative to the API prefix (`/api` or the ops root). */
  path: string;
  summary: string;
  description?: string;
  tags: readonly string[];
  auth: Auth;
  /**
   * The capability (`resource:action`, capabilities.ts) a caller's role must have: every
   * partner and ops route declares one, `mountRoutes` refuses a caller without it, and the document
   * shows it as `x-capability`.
   */
  capability?: Capability;
  params?: z.ZodObject;
  /**
   * The query parameters the route takes. Any other, or one given twice, is `400 INVALID_INPUT`
   * naming it (a route without `query` takes none), unless `ignoresQuery`.
   */
  query?: z.ZodObject;
  /**
   * For documents that generic tools fetch (the OpenAPI document, the docs page a browser opens,
   * the signing keys JWKS clients cache): query parameters they add (cache busters, tracking)
   * are ignored rather than refused, as any static document would.
   */
  ignoresQuery?: true;
  /**
   * Request headers the route reads, keyed by their name as documented (`Idempotency-Key`;
   * looked up case-insensitively). Validated like the rest of the input: a bad value is
   * `400 INVALID_INPUT` with the header's name as the field.
   */
  headers?: z.ZodObject;
  body?: z.ZodType;
  /** Whether `body` may be left out entirely (e.g. an optional activation body). */
  bodyOptional?: boolean;
  /**
   * A POST that only reads (its input too large for a query string): not an action, so the
   * ops audit trail (services/gateway/src/audit/trail.ts) leaves it out.
   */
  changesNothing?: true;
  responses: Readonly<Record<number, SuccessResponse>>;
  /** The route's own error codes; those every route of its kind can give are added (`errorCodesOf`). */
  errors: readonly ErrorCode[];
}

/** Keeps the literal types of a declaration (statuses, schemas) for `implement`. */
export function defineRoute<const C extends RouteContract>(contract: C): C {
  return contract;
}

/** `/policies/{id}` → `/policies/:id` for express. */
export function expressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

/**
 * Every error code a route can answer: its own, plus what its kind of route can always give
 * (input validation, authentication, rate limits, a dependency being unavailable, a server
 * error). The document lists exactly these, and tests hold every response to them.
 */
export function errorCodesOf(contract: RouteContract): ErrorCode[] {
  const codes = new Set<ErrorCode>(contract.errors);
  // Every route reads its request through the same middleware: a malformed JSON body, or a
  // control or bidi character in the query, is 400 even on a route that takes no input.
  codes.add('INVALID_INPUT');
  if (contract.params) codes.add('NOT_FOUND');
  if (contract.auth === 'partner') {
    codes.add('UNAUTHORIZED');
    codes.add('FORBIDDEN');
    codes.add('RATE_LIMIT_EXCEEDED');
  }
  if (contract.auth === 'opsBearer') {
    codes.add('UNAUTHORIZED');
    codes.add('FORBIDDEN');
  }
  // Routes without a caller are limited per client address (the gateway's anonymous limit).
  if (contract.auth === 'none') codes.add('RATE_LIMIT_EXCEEDED');
  codes.add('INTERNAL_ERROR');
  codes.add('SERVICE_UNAVAILABLE');
  return [...codes];
}
