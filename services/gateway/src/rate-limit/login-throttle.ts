import { createHash } from 'node:crypto';
import { AppError } from '@parametric/http';
import type { Redis } from 'ioredis';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { type Limit, redisLimit } from './limits';

export interface LoginThrottleSettings {
  accountFailures: number;
  ipFailures: number;
  windowSeconds: number;
}

/** Sign-in attempts allowed after failures, per account and per client address. */
export interface LoginThrottle {
  /** `429 RATE_LIMIT_EXCEEDED` with `retryAfter` while either budget is spent. */
  assertAllowed(email: string, ip: string): Promise<void>;
  recordFailure(email: string, ip: string): Promise<void>;
  /** A correct password clears the account's failures (not the address's). */
  recordSuccess(email: string): Promise<void>;
}

/** Emails stay out of Redis: the account budget is keyed by a hash of the email. */
const accountKey = (email: string) => createHash('sha256').update(email).digest('hex');

/**
 * Failure budgets in Redis, shared by every gateway replica. Only failures count, so a user
 * who signs in correctly is never throttled by their own successes; the per-address budget
 * is larger (many people may share a cooperative's network) and stops one address from
 * walking through many accounts.
 */
export function loginThrottle(redis: Redis, prefix: string, settings: LoginThrottleSettings): LoginThrottle {
  const account = redisLimit(redis, prefix, {
    name: 'login-account',
    points: settings.accountFailures,
    durationSeconds: settings.windowSeconds,
  });
  const address = redisLimit(redis, prefix, {
    name: 'login-ip',
    points: settings.ipFailures,
    durationSeconds: settings.windowSeconds,
  });
  const budgets = (email: string, ip: string): Array<[Limit, string]> => [
    [account, accountKey(email)],
    [address, ip],
  ];
  return {
    async assertAllowed(email, ip) {
      for (const [limit, key] of budgets(email, ip)) {
        const state = await limit.limiter.get(key);
        if (state && state.consumedPoints >= limit.spec.points) {
          const retryAfter = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
          throw new AppError(
            'RATE_LIMIT_EXCEEDED',
            `Too many failed sign-ins; try again in ${retryAfter} s`,
            { limit: limit.spec.points, retryAfter },
          );
        }
      }
    },
    async recordFailure(email, ip) {
      await Promise.all(
        budgets(email, ip).map(([limit, key]) =>
          limit.limiter.consume(key).catch((err: unknown) => {
            // Over the budget already: the next attempt is refused by assertAllowed.
            if (!(err instanceof RateLimiterRes)) throw err;
          }),
        ),
      );
    },
    async recordSuccess(email) {
      await account.limiter.delete(accountKey(email));
    },
  };
}
