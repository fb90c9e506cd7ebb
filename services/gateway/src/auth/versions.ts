import { randomUUID } from 'node:crypto';
import type { Logger } from '@parametric/logger';
import { commandBoundOf } from '@parametric/redis';
import type { Redis } from 'ioredis';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Limit } from '../rate-limit/limits';

/**
 * A version stamp per organization in Redis: a random token that every change to what a
 * gateway caches about the organization (its key, its state, its users and sessions, its
 * webhook URL) replaces. A replica trusts what it cached only while the stamp it cached with is
 * still the one in Redis, and it reads the stamp in the same round trip as the partner rate
 * limit, so a change made through any replica applies on every replica from the next request,
 * at no extra round trip.
 *
 * Random tokens rather than counters: a stamp that expires or is lost (a Redis restart) comes
 * back as a new token, never as one a replica cached before, so nothing stale can match.
 */

/** Stamps of organizations nobody uses go away; a missing stamp is recreated (a cache miss). */
const VERSION_TTL_SECONDS = 86_400;

/**
 * KEYS[1] the organization's stamp. ARGV[1] a fresh token, stored when there is none; ARGV[2]
 * its lifetime. Returns the stamp.
 */
const CURRENT = `
local version = redis.call('get', KEYS[1])
if not version then
  version = ARGV[1]
  redis.call('set', KEYS[1], version, 'EX', ARGV[2])
end
return version
`;

/**
 * KEYS[1] the stamp, KEYS[2] the rate limit's counter. ARGV[1..2] as above, ARGV[3] the stamp
 * the caller cached with, ARGV[4] the limit's window in seconds. Consumes one point only when
 * the stamp matches (the cached principal is still good), with the very steps of
 * rate-limiter-flexible's own script, so both count in the same bucket the same way. Returns
 * `{version}` or `{version, consumed, pttl}`.
 */
const CHECK_AND_CONSUME = `
local version = redis.call('get', KEYS[1])
if not version then
  version = ARGV[1]
  redis.call('set', KEYS[1], version, 'EX', ARGV[2])
end
if version ~= ARGV[3] then return {version} end
redis.call('set', KEYS[2], 0, 'EX', ARGV[4], 'NX')
local consumed = redis.call('incrby', KEYS[2], 1)
local ttl = redis.call('pttl', KEYS[2])
if ttl == -1 then
  redis.call('expire', KEYS[2], ARGV[4])
  ttl = 1000 * ARGV[4]
end
return {version, consumed, ttl}
`;

interface VersionCommands {
  gatewayAuthVersion(key: string, fresh: string, ttl: number): Promise<string>;
  gatewayAuthCheck(
    key: string,
    limitKey: string,
    fresh: string,
    ttl: number,
    expected: string,
    windowSeconds: number,
  ): Promise<[string] | [string, number, number]>;
}

export interface CheckResult {
  /** The organization's stamp now. */
  version: string;
  /** The partner limit's state after one point, when the stamp matched (else nothing was consumed). */
  limited?: { state: RateLimiterRes; over: boolean };
}

export interface AuthVersions {
  /** The organization's stamp (created when there is none). */
  current(organizationId: string): Promise<string>;
  /**
   * The stamp and, only if it is `expected`, one point of `limit` for `limitKey`: one round trip.
   * Rejects when Redis does not answer (the caller then trusts nothing cached).
   */
  check(
    organizationId: string,
    expected: string | undefined,
    limit: Limit,
    limitKey: string,
  ): Promise<CheckResult>;
  /**
   * Replaces the organization's stamp, after a change and before answering it. Never throws: a
   * failure is logged and retried in the background until the cache's age limit has passed.
   */
  invalidate(organizationId: string): Promise<void>;
  /** Stops background retries (shutdown). */
  stop(): void;
}

/**
 * `redis` must fail fast (no offline queue); `timeoutMs` bounds each call, so a Redis that
 * accepts commands and never answers costs a request at most that long before it falls back.
 */
export function authVersions(options: {
  redis: Redis;
  prefix: string;
  timeoutMs: number;
  /** How long a retry of a failed invalidation is still worth making (the cache's age limit). */
  retryForMs: number;
  logger: Logger;
}): AuthVersions {
  const { redis, prefix, logger } = options;
  redis.defineCommand('gatewayAuthVersion', { numberOfKeys: 1, lua: CURRENT });
  redis.defineCommand('gatewayAuthCheck', { numberOfKeys: 2, lua: CHECK_AND_CONSUME });
  const commands = redis as unknown as VersionCommands;
  // A client whose own command bound (libs/redis/src/fail-fast.ts, the one the gateway runs
  // with) is within `timeoutMs` already rejects a command Redis does not answer in time: a
  // second timer and promise per stamp check would bound nothing more.
  const ownTimeout = commandBoundOf(redis);
  const bounded: <T>(promise: Promise<T>) => Promise<T> =
    ownTimeout !== undefined && ownTimeout <= options.timeoutMs
      ? (promise) => promise
      : (promise) => within(promise, options.timeoutMs);
  const keyOf = (organizationId: string) => `${prefix}:auth:org:${organizationId}`;
  const retries = new Set<NodeJS.Timeout>();

  const replace = (organizationId: string) =>
    within(redis.set(keyOf(organizationId), randomUUID(), 'EX', VERSION_TTL_SECONDS), options.timeoutMs);

  // Retries are timers: their deadline is real time elapsed on this machine, not the service's clock.
  const retryLater = (organizationId: string, until: number) => {
    const timer = setTimeout(() => {
      retries.delete(timer);
      replace(organizationId).catch((err: Error) => {
        if (Date.now() < until) retryLater(organizationId, until);
        else
          logger.error(
            { err: err.message, organizationId },
            'auth cache: gave up publishing a change; other replicas kept what they cached until its age limit',
          );
      });
    }, 1_000);
    timer.unref();
    retries.add(timer);
  };

  return {
    current: (organizationId) =>
      bounded(commands.gatewayAuthVersion(keyOf(organizationId), randomUUID(), VERSION_TTL_SECONDS)),
    async check(organizationId, expected, limit, limitKey) {
      const reply = await bounded(
        commands.gatewayAuthCheck(
          keyOf(organizationId),
          limit.limiter.getKey(limitKey),
          randomUUID(),
          VERSION_TTL_SECONDS,
          // A stamp is never empty, so no cached principal means no match.
          expected ?? '',
          limit.spec.durationSeconds,
        ),
      );
      const [version, consumed, pttl] = reply;
      if (consumed === undefined || pttl === undefined) return { version };
      const points = limit.spec.points;
      const state = new RateLimiterRes(Math.max(points - consumed, 0), pttl, consumed, consumed === 1);
      return { version, limited: { state, over: consumed > points } };
    },
    async invalidate(organizationId) {
      try {
        await replace(organizationId);
      } catch (err) {
        logger.error(
          { err: (err as Error).message, organizationId },
          'auth cache: could not publish a change to Redis; retrying (other replicas may serve what they cached until then)',
        );
        retryLater(organizationId, Date.now() + options.retryForMs);
      }
    },
    stop() {
      for (const timer of retries) clearTimeout(timer);
      retries.clear();
    },
  };
}

/**
 * `promise`, or a rejection after `ms` (for a client without a command timeout of its own, or
 * with a longer one).
 * One promise and one timer per call: this bounds the stamp check of every authenticated
 * request, where `Promise.race` and `finally` cost three more promises each time.
 */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
