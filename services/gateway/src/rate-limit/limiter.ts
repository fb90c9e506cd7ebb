import { AppError } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Limit, LimitSpec } from './limits';

/** The reset is when Redis expires the window: real time, as the partner's clock reads it. */
function setHeaders(res: Response, spec: LimitSpec, state: RateLimiterRes): void {
  res.setHeader('X-RateLimit-Limit', String(spec.points));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, state.remainingPoints)));
  res.setHeader('X-RateLimit-Reset', String(Math.ceil((Date.now() + state.msBeforeNext) / 1000)));
}

/**
 * The answer to one consumed point: the `X-RateLimit-*` headers, and over the limit `429
 * RATE_LIMIT_EXCEEDED` with `details: { limit, retryAfter }` and `Retry-After` (returned, for
 * `next`).
 */
export function settle(
  res: Response,
  spec: LimitSpec,
  state: RateLimiterRes,
  over: boolean,
): AppError | undefined {
  setHeaders(res, spec, state);
  if (!over) return undefined;
  spec.rejected?.();
  const retryAfter = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
  res.setHeader('Retry-After', String(retryAfter));
  return new AppError(
    'RATE_LIMIT_EXCEEDED',
    `Rate limit of ${spec.points} requests per ${spec.durationSeconds} s exceeded`,
    { limit: spec.points, retryAfter },
  );
}

/**
 * Consumes one point from each limit, in order, and reports the last (the most specific) in
 * the `X-RateLimit-*` headers; stops at the first one exceeded. Resolves to the error for
 * `next`, if any.
 */
export async function consumeAll(
  res: Response,
  picked: Array<{ limit: Limit; key: string }>,
  logger: Logger,
): Promise<unknown> {
  for (const { limit, key } of picked) {
    try {
      settle(res, limit.spec, await limit.limiter.consume(key), false);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        logger.error({ err, limit: limit.spec.name }, 'rate limiter failed');
        return err;
      }
      return settle(res, limit.spec, err, true);
    }
  }
  return undefined;
}

/** Consumes one point from each applicable limit (see `consumeAll`). */
export function rateLimit(
  pick: (req: Request) => Array<{ limit: Limit; key: string }>,
  logger: Logger,
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    next(await consumeAll(res, pick(req), logger));
  };
}
