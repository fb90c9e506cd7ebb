import type { IncomingMessage } from 'node:http';
import type { Context } from '../context';
import { fail } from '../failure';

/** `GET /oauth/v1/generate?grant_type=client_credentials` with the app's Basic credentials. */
export function generateToken(ctx: Context, req: IncomingMessage, query: URLSearchParams) {
  const { consumerKey, consumerSecret, tokenTtlSeconds, now } = ctx.settings;
  if (query.get('grant_type') !== 'client_credentials') {
    fail({ status: 400, errorCode: '400.008.02', errorMessage: 'Invalid grant type passed' });
  }
  const header = req.headers.authorization ?? '';
  const match = /^Basic\s+(\S+)$/i.exec(header);
  const decoded = match ? Buffer.from(match[1] as string, 'base64').toString('utf8') : '';
  if (decoded !== `${consumerKey}:${consumerSecret}`) {
    fail({ status: 400, errorCode: '400.008.01', errorMessage: 'Invalid Authentication passed' });
  }
  const token = ctx.state.ids.accessToken();
  ctx.state.tokens.set(token, now().getTime() + tokenTtlSeconds * 1000);
  return { access_token: token, expires_in: String(Math.max(tokenTtlSeconds - 1, 0)) };
}

/** Every other route: a Bearer token this simulator issued and that has not expired. */
export function requireToken(ctx: Context, req: IncomingMessage): void {
  const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  if (!match) {
    fail({ status: 401, errorCode: '404.001.04', errorMessage: 'Invalid Authentication Header' });
  }
  const expiresAt = ctx.state.tokens.get((match as RegExpExecArray)[1] as string);
  if (expiresAt === undefined || ctx.settings.now().getTime() >= expiresAt) {
    fail({ status: 401, errorCode: '404.001.03', errorMessage: 'Invalid Access Token' });
  }
}
