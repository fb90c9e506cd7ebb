import type { Logger } from '@parametric/logger';
import express, {
  type ErrorRequestHandler,
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { z } from 'zod';
import { answeredAfterDeadline, DEFAULT_REQUEST_DEADLINE_MS } from './deadline';
import { errorBody } from './envelope';
import { AppError, type FieldError } from './errors';
import { requestStart } from './request-log';
import { invalidInput } from './validation';

export const MAX_BODY_BYTES = 1024 * 1024;
/**
 * The ops API's body limit: the determination batch door takes 1,000 assessments in one body
 * (about 1 KiB each, more with many input data hashes). Ops callers are trusted and internal.
 */
export const MAX_OPS_BODY_BYTES = 16 * 1024 * 1024;
/**
 * How deep a JSON body may nest. Our deepest body nests 5 levels; a body nested thousands deep
 * (30 KB is enough) overflows the stack of anything that walks it recursively, re-serialising
 * included, so it is refused before parsing.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * An express app with what every service needs first: request ids (taken from
 * `x-request-id` when well-formed, else generated, echoed on the response), request
 * logging with secrets redacted, and JSON bodies of at most 1 MiB (`maxBodyBytes` for an app
 * that serves the ops API). Mount routes, then call `finishApp` to add the 404 and error handlers.
 */
export function createApp(
  logger: Logger,
  options: {
    maxBodyBytes?: number;
    /**
     * What must run before a body is read: rate limits and authentication, so a refused
     * caller costs no decompression or parsing (the gateway).
     */
    beforeBody?: RequestHandler[];
    /** How long a request may take before it is answered `503` (default 15 s). */
    deadlineMs?: number;
    /** Rewrites a request's path before it is logged (a secret in the path, e.g. a callback token). */
    loggedPath?: (path: string) => string;
    /**
     * Records request metrics (`@parametric/metrics`' `metrics.http`): runs first, so requests
     * refused before routing (rate limits, authentication, bodies) are measured too.
     */
    metrics?: RequestHandler;
  } = {},
): Express {
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(
    requestStart(app, logger, {
      deadlineMs: options.deadlineMs ?? DEFAULT_REQUEST_DEADLINE_MS,
      loggedPath: options.loggedPath,
      metrics: options.metrics,
    }),
  );
  for (const handler of options.beforeBody ?? []) app.use(handler);
  app.use(readBody(maxBodyBytes));
  return app;
}

/**
 * The body, in one middleware: a body must be JSON (`requireJsonContentType`), is parsed with
 * its limits checked (`checkJsonText`), its refusals made precise (`bodyErrors`), and no string
 * of it or of the query may hold an unsafe character (`refuseUnsafeText`). A request without a
 * body (no `Content-Length`, no `Transfer-Encoding`: most reads) goes straight to the last
 * check, as the parser would send it on; three express layers would each cost it a dispatch.
 */
function readBody(maxBodyBytes: number) {
  const parse = express.json({
    limit: maxBodyBytes,
    strict: true,
    type: 'application/json',
    verify: checkJsonText,
  });
  const refusalOf = bodyErrors(maxBodyBytes);
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
      // What the parser leaves on a request without a body.
      if (!('body' in (req as object))) req.body = undefined;
      refuseUnsafeText(req, res, next);
      return;
    }
    requireJsonContentType(req, res, (refused?: unknown) => {
      if (refused) return next(refused);
      parse(req, res, (err?: unknown) =>
        err ? next(refusalOf(err, req)) : refuseUnsafeText(req, res, next),
      );
    });
  };
}

/**
 * Characters no field of ours accepts: C0/C1 controls other than tab, newline and carriage
 * return; bidi overrides and isolates (U+202A–U+202E, U+2066–U+2069), which make a name read
 * differently from what it is; and lone surrogates, which MongoDB would store as U+FFFD, so what
 * we echoed would not be what we stored.
 */
const UNSAFE_TEXT =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u;

function unsafeCharacter(text: string): string | undefined {
  const found = UNSAFE_TEXT.exec(text)?.[0];
  if (found === undefined) return undefined;
  const code = (found.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0');
  return found.length === 1 && /[\uD800-\uDFFF]/.test(found)
    ? `contains a lone surrogate (U+${code})`
    : `contains a control or bidi-override character (U+${code})`;
}

/** Every string of the body and query, keys included: `400` naming the first bad field. */
function refuseUnsafeText(req: Request, _res: Response, next: NextFunction): void {
  const problem = findUnsafeText(req.body, '') ?? findUnsafeText(req.query, '');
  if (problem) {
    next(AppError.invalid('Text contains a character we do not accept', [problem]));
    return;
  }
  next();
}

function findUnsafeText(value: unknown, path: string): FieldError | undefined {
  if (typeof value === 'string') {
    const message = unsafeCharacter(value);
    return message ? { field: path, message } : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  // Depth is bounded by MAX_JSON_DEPTH (checked before parsing), so recursion is safe here.
  for (const [key, inner] of Object.entries(value)) {
    const field = path === '' ? key : `${path}.${key}`;
    const keyProblem = unsafeCharacter(key);
    if (keyProblem) return { field, message: `name ${keyProblem}` };
    const found = findUnsafeText(inner, field);
    if (found) return found;
  }
  return undefined;
}

/**
 * Checks the raw bytes before JSON.parse builds anything: nesting deeper than
 * MAX_JSON_DEPTH, and numbers a double cannot hold exactly (`5000.00000000000001` parses as
 * 5000: an amount would be rounded silently, so it is refused instead).
 */
function checkJsonText(_req: unknown, _res: unknown, body: Buffer): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const byte = body[i] as number;
    if (inString) {
      if (byte === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x5b || byte === 0x7b) {
      depth++;
      if (depth > MAX_JSON_DEPTH) throw Object.assign(new Error('too deep'), { type: 'json.too.deep' });
    } else if (byte === 0x5d || byte === 0x7d) depth--;
    else if (byte === 0x2d || (byte >= 0x30 && byte <= 0x39)) {
      let end = i + 1;
      while (end < body.length && NUMBER_BYTE.has(body[end] as number)) end++;
      const literal = body.toString('latin1', i, end);
      if (!isExactDouble(literal)) {
        throw Object.assign(new Error('inexact number'), { type: 'json.inexact.number', literal });
      }
      i = end - 1;
    }
  }
}

/** Bytes that continue a JSON number: digits, `.`, `e`, `E`, `+`, `-`. */
const NUMBER_BYTE = new Set([...'0123456789.eE+-'].map((c) => c.charCodeAt(0)));

/** Whether the decimal a JSON number literal writes is exactly the double it parses to. */
function isExactDouble(literal: string): boolean {
  const value = Number(literal);
  if (!Number.isFinite(value)) return Number.isNaN(value); // malformed: JSON.parse will refuse it
  return decimalOf(literal) === decimalOf(String(value));
}

/** A canonical form of a decimal literal: sign, digits without leading/trailing zeros, scale. */
function decimalOf(literal: string): string {
  const match = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!match) return literal;
  const [, sign = '', whole = '', fraction = '', power = '0'] = match;
  let digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits === '') return '0';
  let scale = Number(power) - fraction.length;
  while (digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    scale += 1;
  }
  return `${sign}${digits}e${scale}`;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** A request body must be JSON; an empty body is fine (e.g. `POST .../rotate`). */
function requireJsonContentType(req: Request, _res: Response, next: NextFunction): void {
  if (BODY_METHODS.has(req.method) && hasBody(req) && !req.is('application/json')) {
    next(AppError.invalid('Content-Type must be application/json'));
    return;
  }
  next();
}

/**
 * The refusals of a body this app cannot read, each a precise `400`: over this app's limit,
 * nested too deep, or a compressed body that does not decompress (zlib's and brotli's errors carry no
 * body-parser type and would otherwise be a 500).
 */
function bodyErrors(maxBodyBytes: number) {
  const limit = `${maxBodyBytes / (1024 * 1024)} MiB`;
  const refusal = (err: BodyParserError & { code?: string; literal?: string }, req: Request) => {
    if (err?.type === 'entity.too.large') return `Request body exceeds ${limit}`;
    if (err?.type === 'json.too.deep') return `JSON body nests deeper than ${MAX_JSON_DEPTH} levels`;
    if (err?.type === 'json.inexact.number') {
      const literal = String(err.literal ?? '').slice(0, 40);
      return `The number ${literal} has more digits than can be held exactly; amounts are refused, never rounded`;
    }
    if (typeof err?.code === 'string' && /^(Z_|ERR_BROTLI|ERR__)/.test(err.code)) {
      return `Malformed ${req.headers['content-encoding'] ?? 'compressed'} body`;
    }
    return undefined;
  };
  return (err: unknown, req: Request): unknown => {
    const message = refusal(err as BodyParserError, req);
    return message === undefined ? err : AppError.invalid(message);
  };
}

/** Adds the 404 for unknown routes and the one error handler that renders every error. */
export function finishApp(app: Express, logger: Logger): Express {
  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new AppError('NOT_FOUND', `No route for ${req.method} ${req.path}`));
  });
  app.use(errorHandler(logger));
  return app;
}

interface BodyParserError {
  type?: string;
  status?: number;
}

const BODY_ERRORS: Record<string, string> = {
  'entity.parse.failed': 'Malformed JSON body',
  'encoding.unsupported': 'Unsupported content encoding',
  'charset.unsupported': 'Unsupported charset: JSON bodies must be UTF-8',
  'request.aborted': 'Request aborted',
  'request.size.invalid': 'Request body length does not match Content-Length',
};

/**
 * Renders every error as the spec's envelope. Known errors keep their code; input errors
 * become `400 INVALID_INPUT`; anything else is `500 INTERNAL_ERROR` with a generic message
 * (the cause goes to the log with the request id, never to the client).
 */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, next: NextFunction) => {
    const appError = toAppError(err);
    if (answeredAfterDeadline(req)) {
      req.log.warn(
        { err: appError ? appError.code : err },
        'request failed after its deadline had answered it',
      );
      return;
    }
    if (!appError) {
      const requestId = String(req.id ?? res.getHeader('x-request-id') ?? '');
      (req.log ?? logger).error({ err, requestId }, 'unhandled error');
    }
    // Too late for an envelope: express's default handler closes the connection.
    if (res.headersSent) return next(err);
    if (!appError) {
      res.status(500).json(errorBody('INTERNAL_ERROR', 'An unexpected error occurred'));
      return;
    }
    res.status(appError.status).json(errorBody(appError.code, appError.message, appError.details));
  };
}

function toAppError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  // express's router could not decode a path parameter (`%E0%A4%A`).
  if (err instanceof URIError) return AppError.invalid('Malformed percent-encoding in the request path');
  if (err instanceof z.ZodError) return invalidInput(err, 'input');
  const bodyError = err as BodyParserError;
  if (bodyError?.type && BODY_ERRORS[bodyError.type] && (bodyError.status ?? 500) < 500) {
    return AppError.invalid(BODY_ERRORS[bodyError.type] as string);
  }
  return undefined;
}
