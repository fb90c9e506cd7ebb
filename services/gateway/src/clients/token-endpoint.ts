import { AppError } from '@parametric/http';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import { type OpsClients, TokenRefusal, type TokenRequest } from './domain';

/** A token request is a few short parameters. */
const MAX_TOKEN_REQUEST_BYTES = 4 * 1024;

/**
 * `POST /auth/token` (under `/ops`): the OAuth 2.0 token endpoint for machine clients (RFC 6749
 * section 4.4, client credentials), so that standard OAuth client libraries work: a form-encoded body,
 * the client authenticated by HTTP Basic or `client_id`/`client_secret` in the body, the answer
 * of section 5.1 and the errors of section 5.2, neither in the platform's envelope. Mounted before the ops
 * caller is resolved and before the JSON body reader, which would refuse a form body.
 */
export function tokenEndpoint(deps: { clients: OpsClients; clientIp: (req: Request) => string }): Router {
  const parse = express.urlencoded({
    extended: false,
    limit: MAX_TOKEN_REQUEST_BYTES,
    type: 'application/x-www-form-urlencoded',
  });
  const router = Router();
  router.post('/auth/token', (req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Pragma', 'no-cache');
    if (!req.is('application/x-www-form-urlencoded')) {
      return refuse(
        res,
        new TokenRefusal('invalid_request', 'The body must be application/x-www-form-urlencoded'),
      );
    }
    parse(req, res, (err?: unknown) => {
      if (err) return refuse(res, new TokenRefusal('invalid_request', 'The body could not be read'));
      answer(deps, req, res).catch(next);
    });
  });
  return router;
}

async function answer(
  deps: { clients: OpsClients; clientIp: (req: Request) => string },
  req: Request,
  res: Response,
): Promise<void> {
  const basic = /^Basic +(\S+) *$/i.exec(req.headers.authorization ?? '')?.[1];
  try {
    const params = singleValued(req.body as Record<string, unknown>);
    if (params.grant_type === undefined) throw new TokenRefusal('invalid_request', 'grant_type is required');
    if (params.grant_type !== 'client_credentials') {
      throw new TokenRefusal('unsupported_grant_type', 'Only grant_type=client_credentials is supported');
    }
    const tokenRequest = credentialsOf(basic, params);
    res.status(200).json(await deps.clients.issueToken(tokenRequest, deps.clientIp(req)));
  } catch (err) {
    if (err instanceof TokenRefusal) return refuse(res, err);
    if (err instanceof AppError && err.code === 'RATE_LIMIT_EXCEEDED') {
      const retryAfter = Number((err.details as { retryAfter?: number } | undefined)?.retryAfter ?? 60);
      res.setHeader('Retry-After', String(retryAfter));
      res.status(429).json({ error: 'invalid_client', error_description: err.message });
      return;
    }
    throw err;
  }
}

/** RFC 6749, section 3.2: a parameter sent more than once is an invalid request. */
function singleValued(body: Record<string, unknown>): Record<string, string | undefined> {
  const params: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(body ?? {})) {
    if (typeof value !== 'string')
      throw new TokenRefusal('invalid_request', `${name} is given more than once`);
    params[name] = value;
  }
  return params;
}

/** The client's credentials from exactly one of Basic (RFC 6749, section 2.3.1) or the body. */
function credentialsOf(basic: string | undefined, params: Record<string, string | undefined>): TokenRequest {
  const inBody = params.client_id !== undefined || params.client_secret !== undefined;
  if (basic !== undefined && inBody) {
    throw new TokenRefusal(
      'invalid_request',
      'Authenticate the client one way: HTTP Basic or the body, not both',
    );
  }
  let clientId = params.client_id;
  let clientSecret = params.client_secret;
  if (basic !== undefined) {
    const decoded = Buffer.from(basic, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new TokenRefusal('invalid_client', 'Malformed HTTP Basic credentials');
    // RFC 6749, section 2.3.1: both halves are form-encoded before they are joined.
    const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    try {
      clientId = formDecode(decoded.slice(0, colon));
      clientSecret = formDecode(decoded.slice(colon + 1));
    } catch {
      throw new TokenRefusal('invalid_client', 'Malformed HTTP Basic credentials');
    }
  }
  if (!clientId || !clientSecret) {
    throw new TokenRefusal(
      'invalid_client',
      'Client authentication is required (HTTP Basic or client_id and client_secret)',
    );
  }
  return { clientId, clientSecret, ...(params.scope !== undefined ? { scope: params.scope } : {}) };
}

/**
 * RFC 6749, section 5.2: `invalid_client` is `401` with a Basic challenge (required when the client tried Basic,
 * allowed otherwise, and one answer whichever way it authenticated); every other error `400`.
 */
function refuse(res: Response, refusal: TokenRefusal): void {
  const unauthorized = refusal.error === 'invalid_client';
  if (unauthorized) res.setHeader('WWW-Authenticate', 'Basic realm="ops", charset="UTF-8"');
  res.status(unauthorized ? 401 : 400).json({ error: refusal.error, error_description: refusal.description });
}
