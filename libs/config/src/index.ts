import { z } from 'zod';

/** Thrown at start-up when the environment does not satisfy a service's config schema. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Reads and validates configuration once, at start-up; the result is passed to whatever
 * needs it. The error lists each bad variable and why, never its value (many are secrets).
 */
export function loadConfig<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
  throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
}

/**
 * `VAR=` (empty, as compose writes an unset `${VAR}`) means unset, so the default applies;
 * a bare coercion would read it as 0.
 */
const emptyIsUnset = <S extends z.ZodType>(schema: S) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema);

/** A TCP port number from the environment (0 lets the OS choose, for tests). */
export const port = (fallback: number) =>
  emptyIsUnset(z.coerce.number().int().min(0).max(65_535).default(fallback));

/** A secret from the environment: required, and long enough to be worth its name. */
export const secret = () => z.string().min(16, 'must be set and at least 16 characters');

export const nodeEnv = z.enum(['production', 'development', 'test']).default('development');

export const logLevel = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .default('info');

/** A positive integer from the environment, e.g. a rate-limit budget. */
export const positiveInt = (fallback: number) =>
  emptyIsUnset(z.coerce.number().int().positive().default(fallback));

/** `true`/`false`/`1`/`0` from the environment (z.coerce.boolean would read "false" as true). */
export const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

/** An optional absolute http(s) URL, without a trailing slash. */
export const serviceUrl = () =>
  emptyIsUnset(
    z
      .url({ protocol: /^https?$/ })
      .transform((u) => u.replace(/\/+$/, ''))
      .optional(),
  );

/** A service's MongoDB database name (each service owns its own). */
export const mongoDbName = (fallback: string) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,63}$/, 'must be 1-63 letters, digits, _ or -')
    .default(fallback);

/**
 * Namespace of every Redis key the platform writes (queues, rate limits, locks): the same for
 * every service, since they share queues.
 */
export const redisPrefix = z
  .string()
  .regex(/^[A-Za-z0-9_-]+$/, 'must be letters, digits, _ or -')
  .default('platform');

/**
 * What every service of the platform reads alike: its environment and log level, where it
 * listens (`<SERVICE>_HOST`, `<SERVICE>_PORT`), its MongoDB (its own database by default), the
 * shared Redis namespace, and the secret the gateway signs forwarded requests with. Spread it
 * into the service's schema: `z.object({ ...platformService('POLICY', 'policy'), … })`.
 */
/**
 * Above every dependency's own limit (chain and M-Pesa calls 10 s, a MongoDB socket 10 s), so
 * a dependency's precise error answers first and the deadline is the backstop.
 */
export const REQUEST_DEADLINE_DEFAULT_MS = 15_000;
export const OPS_REQUEST_DEADLINE_DEFAULT_MS = 60_000;

const otelServiceName = emptyIsUnset(z.string().min(1).max(100).optional());

export function platformService<P extends string>(prefix: P, database: string) {
  return {
    NODE_ENV: nodeEnv,
    LOG_LEVEL: logLevel,
    [`${prefix}_HOST`]: z.string().default('0.0.0.0'),
    [`${prefix}_PORT`]: port(3000),
    MONGO_URL: z.string().min(1, 'must be set'),
    MONGO_DB: mongoDbName(database),
    REDIS_URL: z.string().min(1, 'must be set'),
    REDIS_PREFIX: redisPrefix,
    INTERNAL_SIGNING_SECRET: secret(),
    REQUEST_DEADLINE_MS: positiveInt(REQUEST_DEADLINE_DEFAULT_MS),
    OPS_REQUEST_DEADLINE_MS: positiveInt(OPS_REQUEST_DEADLINE_DEFAULT_MS),
    OTEL_EXPORTER_OTLP_ENDPOINT: serviceUrl(),
    OTEL_SERVICE_NAME: otelServiceName,
  } as {
    NODE_ENV: typeof nodeEnv;
    LOG_LEVEL: typeof logLevel;
    MONGO_URL: z.ZodString;
    MONGO_DB: ReturnType<typeof mongoDbName>;
    REDIS_URL: z.ZodString;
    REDIS_PREFIX: typeof redisPrefix;
    INTERNAL_SIGNING_SECRET: ReturnType<typeof secret>;
    /** How long a request may take before it is answered `503` (every HTTP API of the service). */
    REQUEST_DEADLINE_MS: ReturnType<typeof positiveInt>;
    /** The same for the ops APIs, whose batch doors take up to 1,000 items in one call. */
    OPS_REQUEST_DEADLINE_MS: ReturnType<typeof positiveInt>;
    /**
     * An OTLP/HTTP collector (e.g. `http://otel-collector:4318`): when set, the service exports
     * its spans to `<url>/v1/traces`. Unset (the default): no span is exported, no request made.
     */
    OTEL_EXPORTER_OTLP_ENDPOINT: ReturnType<typeof serviceUrl>;
    /** `service.name` of exported spans; the service's own name by default. */
    OTEL_SERVICE_NAME: typeof otelServiceName;
  } & Record<`${P}_HOST`, z.ZodDefault<z.ZodString>> &
    Record<`${P}_PORT`, ReturnType<typeof port>>;
}
