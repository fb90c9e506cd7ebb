import { createHmac, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { capabilitiesOf, OPS_CAPABILITIES } from './capabilities';
import { AppError } from './errors';

/**
 * Who a forwarded request acts for. The gateway authenticates the partner and signs this
 * context; services accept only a correctly signed, fresh context, never an organization
 * id taken from partner input.
 */
export const internalContextSchema = z.strictObject({
  organizationId: z.uuid(),
  /**
   * The caller's role (capabilities.ts ROLES): `ORG_ADMIN` for the API key, the user's current
   * role for a dashboard token. The gateway has already checked the route's capability;
   * `mountRoutes` checks it again against this role.
   */
  role: z.string().regex(/^ORG_[A-Z]+$/),
  /** The dashboard user acting, for the audit trail; absent when the API key acts. */
  userId: z.uuid().optional(),
  requestId: z.string().min(1).max(64),
  issuedAt: z.number().int(),
  /**
   * The organization as the gateway saw it for this request (it owns organizations), so a
   * service can apply gates such as KYB or market without a second round trip.
   */
  organization: z
    .strictObject({
      countryCode: z.string(),
      kybStatus: z.string(),
      serviceTier: z.string(),
      isActive: z.boolean(),
      /**
       * `sandbox` for a sandbox organization. Absent means `live`: the gateway signs it for sandbox
       * organizations only, so a live request's context is what a service older than the field
       * accepts.
       */
      environment: z.enum(['sandbox', 'live']).optional(),
    })
    .optional(),
});
export type InternalContext = z.infer<typeof internalContextSchema>;

/**
 * An ops action forwarded by the gateway's ops API (after it verified the caller and checked the
 * route's capability), or a service calling another's ops route (internal-client.ts).
 */
export const opsContextSchema = z.strictObject({
  /**
   * Who acts, for the refusal's message: an ops role (`UNDERWRITER`…), `CLIENT` for a machine
   * client, `BREAK_GLASS` for the shared ops token, `SERVICE` for a service's own call.
   */
  role: z.string().regex(/^[A-Z_]+$/),
  /** What the caller may do; `mountRoutes` checks the route's capability against it again. */
  capabilities: z.array(z.enum(OPS_CAPABILITIES)),
  requestId: z.string().min(1).max(64),
  issuedAt: z.number().int(),
});
export type OpsContext = z.infer<typeof opsContextSchema>;

export const CONTEXT_HEADER = 'x-internal-context';
export const SIGNATURE_HEADER = 'x-internal-signature';
/** A signed context is good for this long: enough for a hop, too short to replay later. */
export const CONTEXT_MAX_AGE_MS = 60_000;

function sign(payload: string, secret: string): string {
  return createHmac('sha256', secret).update(payload).digest('hex');
}

export function signContext(context: InternalContext | OpsContext, secret: string): Record<string, string> {
  const payload = Buffer.from(JSON.stringify(context)).toString('base64url');
  return { [CONTEXT_HEADER]: payload, [SIGNATURE_HEADER]: sign(payload, secret) };
}

export function verifyContext(
  headers: Record<string, string | string[] | undefined>,
  secret: string,
  now = Date.now(),
): InternalContext | undefined {
  return verifySigned(headers, secret, internalContextSchema, now);
}

export function verifyOpsContext(
  headers: Record<string, string | string[] | undefined>,
  secret: string,
  now = Date.now(),
): OpsContext | undefined {
  return verifySigned(headers, secret, opsContextSchema, now);
}

function verifySigned<S extends typeof internalContextSchema | typeof opsContextSchema>(
  headers: Record<string, string | string[] | undefined>,
  secret: string,
  schema: S,
  now: number,
): z.infer<S> | undefined {
  const payload = headers[CONTEXT_HEADER];
  const signature = headers[SIGNATURE_HEADER];
  if (typeof payload !== 'string' || typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature))
    return undefined;
  const expected = Buffer.from(sign(payload, secret), 'hex');
  const given = Buffer.from(signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const result = schema.safeParse(parsed);
  if (!result.success) return undefined;
  if (Math.abs(now - result.data.issuedAt) > CONTEXT_MAX_AGE_MS) return undefined;
  return result.data as z.infer<S>;
}

declare global {
  namespace Express {
    interface Request {
      /** Set by `requireInternalContext` on service routes. */
      context?: InternalContext;
    }
  }
}

/**
 * Service-side guard: only requests the gateway signed reach the routes behind it, as the
 * caller the signed role makes (whose capabilities `mountRoutes` checks).
 */
export function requireInternalContext(secret: string) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const context = verifyContext(req.headers, secret);
    if (!context) {
      next(AppError.unauthorized('Missing or invalid internal context'));
      return;
    }
    req.context = context;
    req.caller = { role: context.role, capabilities: capabilitiesOf(context.role) };
    next();
  };
}

/**
 * Service-side guard for `/ops/*` routes: only ops actions the gateway signed get through, as the
 * caller the signed role and capabilities make (whose capability `mountRoutes` checks).
 */
export function requireOpsContext(secret: string) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const context = verifyOpsContext(req.headers, secret);
    if (!context) {
      next(AppError.unauthorized('Missing or invalid ops context'));
      return;
    }
    req.caller = { role: context.role, capabilities: context.capabilities };
    next();
  };
}

/** The verified organization of a service request. */
export function organizationOf(req: Request): string {
  if (!req.context) throw new Error('requireInternalContext must run before this handler');
  return req.context.organizationId;
}
