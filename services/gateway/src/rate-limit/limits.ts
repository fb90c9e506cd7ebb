import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';

export interface LimitSpec {
  name: string;
  points: number;
  durationSeconds: number;
  /** Called for each request this limit refuses (`rate_limit_rejections_total{limiter}`). */
  rejected?: () => void;
}

export interface Limit {
  spec: LimitSpec;
  limiter: RateLimiterRedis;
}

/**
 * A limit counted in Redis, so every gateway replica shares it. If Redis is unreachable
 * the count falls back to this replica's memory (per-replica limits) rather than failing
 * partner requests: readiness reports Redis down, and limits stay roughly enforced.
 */
export function redisLimit(redis: Redis, prefix: string, spec: LimitSpec): Limit {
  return {
    spec,
    limiter: new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${prefix}:rl:${spec.name}`,
      points: spec.points,
      duration: spec.durationSeconds,
      insuranceLimiter: new RateLimiterMemory({ points: spec.points, duration: spec.durationSeconds }),
    }),
  };
}
