import { traceLogFields } from '@parametric/tracing';
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths pino replaces with "[Redacted]": API keys, secrets and signatures must never reach
 * a log line, wherever they appear in a logged object (request headers, bodies, config).
 * pino matches exact paths, so each name is listed at the depths we log objects.
 */
const SECRET_FIELDS = [
  'apiKey',
  'apiSecret',
  'secret',
  'webhookSecret',
  'password',
  'token',
  'keyHash',
  'secretHash',
  // The chain registry owner's key, and RPC URLs (hosted providers embed an API key in them).
  'privateKey',
  'CHAIN_PRIVATE_KEY',
  'CHAIN_RPC_URL',
  // Ed25519 keys that sign determinations and dashboard tokens (PKCS#8 PEM bundles).
  'DETERMINATION_SIGNING_KEYS',
  'DASHBOARD_TOKEN_KEYS',
  // Dashboard sign-in: passwords, the tokens it hands out, their stored hashes.
  'adminPassword',
  'passwordHash',
  'accessToken',
  'refreshToken',
  'invitationToken',
  'invitationHash',
];
export const REDACT_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers["x-internal-signature"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers["x-api-key"]',
  'headers.authorization',
  ...SECRET_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`, `*.*.*.${f}`]),
];

export interface LoggerOptions {
  name: string;
  level?: string;
  /** Where lines go; stdout by default (tests pass a stream to read them). */
  destination?: pino.DestinationStream;
}

/**
 * Set on a child logger that already binds `traceId`, `spanId` and `reqId` (a request's
 * `req.log`, which may log after the request's async context is gone): the mixin adds nothing
 * to its lines, so no field appears twice.
 */
export const TRACE_BOUND: unique symbol = Symbol('parametric.traceBound');

/**
 * Every line logged while a request or a job is handled carries its `traceId`, `spanId` and
 * `reqId` (from @parametric/tracing's AsyncLocalStorage), whichever logger wrote it.
 */
function traceMixin(_obj: object, _level: number, logger: Logger): object {
  return (logger as Logger & { [TRACE_BOUND]?: boolean })[TRACE_BOUND] ? {} : traceLogFields();
}

export function createLogger({ name, level = 'info', destination }: LoggerOptions): Logger {
  return pino(
    {
      name,
      level,
      redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
      base: { service: name },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: traceMixin,
    },
    destination,
  );
}
