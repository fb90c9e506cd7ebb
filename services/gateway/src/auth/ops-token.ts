import { AppError } from '@parametric/http';
import type { NextFunction, Request, Response } from 'express';
import { sameSecret } from '../credentials/secrets';

/** `Authorization: Bearer <OPS_TOKEN>`, compared in constant time; `refused` hears each refusal. */
export function requireOpsToken(
  token: string,
  refused?: () => void,
  options: {
    /**
     * Paths (under the mount) a browser opens, the queue dashboard: there the token is also taken
     * as the password of HTTP Basic credentials (any user name), and a refusal asks the browser
     * for them, since a browser cannot send a bearer token.
     */
    browserPath?: string;
  } = {},
) {
  const expected = Buffer.from(token);
  return (req: Request, res: Response, next: NextFunction): void => {
    const header = req.headers.authorization ?? '';
    const browser = options.browserPath !== undefined && req.path.startsWith(options.browserPath);
    const given = header.startsWith('Bearer ') ? header.slice(7) : browser ? basicPassword(header) : '';
    if (!sameSecret(given, expected)) {
      refused?.();
      if (browser) res.setHeader('WWW-Authenticate', 'Basic realm="ops", charset="UTF-8"');
      next(AppError.unauthorized('A valid ops bearer token is required'));
      return;
    }
    next();
  };
}

/** The password of `Basic base64(user:password)` credentials, or '' when there are none. */
function basicPassword(header: string): string {
  if (!header.startsWith('Basic ')) return '';
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? '' : decoded.slice(colon + 1);
}
