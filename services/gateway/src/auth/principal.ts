import { AppError } from '@parametric/http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { hashCredential, sameHash } from '../api-keys/credentials';
import type { ApiKeyModel } from '../api-keys/model';
import type { OrganizationDoc, OrganizationModel } from '../organizations/model';

/** Who is calling: the organization behind a valid, active API key. */
export interface Principal {
  keyHash: string;
  organization: OrganizationDoc;
}

declare global {
  namespace Express {
    interface Request {
      principal?: Principal;
    }
  }
}

/** Longer than any key we issue; anything longer is not worth hashing. */
const MAX_KEY_LENGTH = 128;

/**
 * Resolves `x-api-key` to its organization without answering yet, so the rate limiter can
 * count every request (anonymous ones by client IP) before `requirePrincipal` rejects.
 */
export function identify(deps: {
  pepper: string;
  apiKeys: ApiKeyModel;
  organizations: OrganizationModel;
}): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    const key = req.headers['x-api-key'];
    if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH) return next();
    const keyHash = hashCredential(deps.pepper, key);
    const record = await deps.apiKeys.findOne({ keyHash, active: true }).lean();
    if (!record || !sameHash(record.keyHash, keyHash)) return next();
    const organization = await deps.organizations.findById(record._id).lean<OrganizationDoc>();
    if (organization) req.principal = { keyHash, organization };
    next();
  };
}

/** 401 without a valid key; 403 for a deactivated organization (spec 5.3, 5.6). */
export function requirePrincipal(req: Request, _res: Response, next: NextFunction): void {
  if (!req.principal) {
    const sent = typeof req.headers['x-api-key'] === 'string' && req.headers['x-api-key'] !== '';
    next(AppError.unauthorized(sent ? 'Invalid, revoked or replaced API key' : 'Missing x-api-key header'));
    return;
  }
  if (!req.principal.organization.isActive) {
    next(AppError.forbidden('Organization is deactivated'));
    return;
  }
  next();
}

/** The authenticated organization of a partner request. */
export function principalOf(req: Request): Principal {
  if (!req.principal) throw new Error('requirePrincipal must run before this handler');
  return req.principal;
}
