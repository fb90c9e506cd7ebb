import { OPS_ROUTES, PARTNER_ROUTES, type ServiceName } from '@parametric/contracts';
import { type OutboxRelay, startOutboxRelay } from '@parametric/events';
import {
  answerOptions,
  type Binding,
  createApp,
  finishApp,
  type HealthCheck,
  healthRoutes,
  type InternalContext,
  type Listening,
  listen,
  metricsRoutes,
  mountRoutes,
  requireInternalContext,
  requireOpsContext,
} from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { createMetrics, type HttpMetricsOptions, type Metrics, type OutboxModel } from '@parametric/metrics';
import { connectMongo, type IndexedModel, pingMongo } from '@parametric/mongo';
import {
  createProducer,
  createQueueStats,
  type Producer,
  type QueueName,
  type Sweep,
  type SweepQueue,
  startJobOutboxRelay,
  startSweeps,
  type TaskOf,
} from '@parametric/queue';
import { connectFailFast } from '@parametric/redis';
import { type Express, type Request, type RequestHandler, Router } from 'express';
import type { Redis } from 'ioredis';
import type { Collection, Connection } from 'mongoose';
import { type IndexWatch, observeDegraded, watchUniqueIndexes } from './readiness';

/** What every service's config holds (libs/config `platformService`, plus the runtime's knobs). */
export interface PlatformConfig {
  /**
   * `production`: the service builds no index (the `migrate` command does, before a rollout) and
   * stays not-ready until its unique indexes exist. Anything else builds them at start.
   */
  NODE_ENV?: 'production' | 'development' | 'test';
  MONGO_URL: string;
  MONGO_DB: string;
  REDIS_URL: string;
  REDIS_PREFIX: string;
  INTERNAL_SIGNING_SECRET: string;
  REQUEST_DEADLINE_MS: number;
  OPS_REQUEST_DEADLINE_MS: number;
  /** How often the outbox relays poll (their safety net: a write in this process wakes them). */
  OUTBOX_POLL_MS?: number;
  /** Workers and sweeps run in this process (an API-only replica sets false). Default true. */
  RUN_WORKERS?: boolean;
  /** In production, how often a missing unique index is looked for again (default INDEX_RECHECK_MS). */
  INDEX_RECHECK_MS?: number;
}

/**
 * A service's data (its `repositories.ts`): made on the connection; `init` waits for its models
 * (and, outside production, their indexes) to be set up.
 */
export interface Repositories {
  init(): Promise<unknown>;
}

/** Anything the runtime closes when the service stops. */
export interface Closable {
  /** May answer a promise; the runtime waits for it. */
  close(): unknown;
}

/** One producer per queue the service produces to. */
export type Producers<Q extends QueueName> = { readonly [N in Q]: Producer<N> };

/** A mongoose model whose schema went through `withOutbox` and/or `withJobOutbox`. */
export type RelayedModel = OutboxModel & { readonly collection: Collection; readonly modelName: string };

/**
 * An outbox the service relays: its events (to the `events` queue, with the relay-lag metric),
 * or its jobs (to the queues named, each of which the service produces to).
 */
export type RelayDeclaration<Q extends QueueName> =
  | ('events' extends Q ? { events: RelayedModel } : never)
  | { jobs: RelayedModel; to: readonly Q[] };

/** What `repositories` may use beside the MongoDB connection. */
export interface RepositoryStores<C extends PlatformConfig> {
  config: C;
  logger: Logger;
  /** A Redis client that fails fast while Redis is away; closed by the runtime after the producers. */
  connectRedis(purpose: string): Promise<Redis>;
}

/** What the start-up has made by the time the service's parts are built. */
export interface ServiceKit<C extends PlatformConfig, R extends Repositories, Q extends QueueName> {
  config: C;
  logger: Logger;
  connection: Connection;
  repositories: R;
  producers: Producers<Q>;
  metrics: Metrics;
  /** Where workers connect (`createWorker`'s `connection` and `prefix`). */
  queue: { connection: string; prefix: string };
  /** A Redis client that fails fast while Redis is away; closed by the runtime after the producers. */
  connectRedis(purpose: string): Promise<Redis>;
  /** The service's periodic sweeps on one sweep queue (started only where workers run). */
  sweeps<N extends Q & SweepQueue>(queue: N, tasks: Record<TaskOf<N>, Sweep>): SweepsDeclaration;
}

/** Sweeps ready to start (`kit.sweeps`). */
export interface SweepsDeclaration {
  start(): Promise<Closable>;
}

/** The signed caller of a partner request (verified by `requireInternalContext`). */
export type PartnerCaller = InternalContext;

/**
 * The service's internal HTTP API: `/healthz`, `/readyz`, `GET /metrics`, then the open routes,
 * the partner routes under `/api` (signed context required) and the ops routes under `/ops`.
 */
export interface ApiDeclaration<P, O> {
  port: number;
  host: string;
  /** Default MAX_BODY_BYTES of libs/http. */
  maxBodyBytes?: number;
  /** Default the config's REQUEST_DEADLINE_MS. */
  deadlineMs?: number;
  /** Routes that need no signed context, mounted first (e.g. the published signing keys). */
  open?(app: Express): void;
  partner?: {
    routes: ReadonlyArray<Binding<P>>;
    /**
     * The handler's context for one caller. Only what is the caller's is made here (the tenant's
     * repositories, its organization); everything else is built once, with the routes.
     */
    context(caller: PartnerCaller): P;
  };
  ops?: { routes: ReadonlyArray<Binding<O>>; context: O };
}

/** Another port the service listens on (the gateway's two, the payments provider callbacks). */
export interface ListenerDeclaration {
  name: string;
  port: number;
  host: string;
  app?: {
    maxBodyBytes?: number;
    /** Default the config's REQUEST_DEADLINE_MS. */
    deadlineMs?: number;
    beforeBody?: RequestHandler[];
    loggedPath?: (path: string) => string;
  };
  /**
   * Extra `/readyz` checks beside MongoDB's, for what this port cannot serve without (a
   * dependency with a fallback belongs in the service's `degradesAround`); `false`: no health
   * routes on this port.
   */
  health?: Record<string, HealthCheck> | false;
  /** Where `GET /metrics` is mounted on this port (`/ops` on the gateway's); none by default. */
  metricsAt?: string;
  mount(app: Express): void;
}

/** The parts of a service, built once the stores are connected and the producers made. */
export interface ServiceParts<Q extends QueueName, X extends object, P = unknown, O = unknown> {
  relays?: ReadonlyArray<RelayDeclaration<Q>>;
  api?: ApiDeclaration<P, O>;
  listeners?: ReadonlyArray<ListenerDeclaration>;
  /** Queue consumers and the like; made only where workers run (`RUN_WORKERS`). */
  workers?(): Closable[] | Promise<Closable[]>;
  sweeps?: SweepsDeclaration;
  /** Closed in this order, after the workers and relays and before the producers. */
  close?: ReadonlyArray<Closable>;
  /**
   * Dependencies the service serves without (a fallback covers them, e.g. the gateway's rate
   * limits in memory while Redis is away): reported under `degraded` in every `/readyz` and as
   * `dependency_degraded{dependency}`, never making the pod not-ready (./readiness.ts).
   */
  degradesAround?: Record<string, HealthCheck>;
  /** What the running service offers besides its listeners (tests, benchmarks). */
  expose?: X;
}

export interface ServiceDeclaration<
  C extends PlatformConfig,
  R extends Repositories,
  Q extends QueueName,
  X extends object,
  P = unknown,
  O = unknown,
> {
  name: ServiceName;
  /**
   * The service's data on the connection. Whatever its repositories depend on beside MongoDB
   * (the gateway's auth stamps in Redis) is connected here, through `stores`.
   */
  repositories(connection: Connection, stores: RepositoryStores<C>): R | Promise<R>;
  /**
   * Every model of the service on the connection (those `repositories` uses): their declared
   * indexes are what the `migrate` command creates and, in production, what the service checks
   * for at start (libs/runtime/src/migrate.ts, ./readiness.ts).
   */
  models(connection: Connection): readonly IndexedModel[];
  /** The queues the service produces to: one producer each, in `kit.producers`. */
  produces: readonly Q[];
  /** The queues whose depth `/metrics` reports: those it produces to or consumes from. */
  queueStats: readonly QueueName[];
  metrics?: HttpMetricsOptions;
  build(kit: ServiceKit<C, R, Q>): ServiceParts<Q, X, P, O> | Promise<ServiceParts<Q, X, P, O>>;
}

export interface ServiceListener {
  url: string;
  app: Express;
}

export type RunningService<X extends object> = X & {
  /** A listener by name (`api` for the internal API). */
  listener(name: string): ServiceListener;
  /** Moves everything recorded in the outboxes to the queues now and waits (tests, shutdown). */
  drainOutbox(): Promise<void>;
  /** The ordered stop; the same promise however often it is called. */
  stop(): Promise<void>;
};

/**
 * How long each step of the stop after HTTP may take before the runtime logs it, counts it as a
 * failure and goes on (a store already gone must not hold the rest of the stop).
 */
export const STOP_STEP_MS = 5_000;

type Step = { name: string; closers: Closable[] };

/**
 * Starts a service from its declaration: MongoDB → (in production) the unique indexes checked → repositories (elsewhere their indexes built) → producers →
 * the service's parts → relays (kicked once, for what a previous run left) → workers and sweeps
 * (where they run) → the HTTP listeners. Stops in order: HTTP first (no new work), then queue
 * stats, workers and sweeps, relays, the service's own resources, producers, Redis, MongoDB,
 * each step after HTTP bounded by `STOP_STEP_MS` (HTTP waits for the answers it owes). A start
 * that fails closes what it had opened.
 */
export async function startService<
  C extends PlatformConfig,
  R extends Repositories,
  Q extends QueueName,
  X extends object,
  P,
  O,
>(declaration: ServiceDeclaration<C, R, Q, X, P, O>, config: C, logger: Logger): Promise<RunningService<X>> {
  const steps = {
    http: { name: 'http', closers: [] } as Step,
    stats: { name: 'queue stats', closers: [] } as Step,
    workers: { name: 'workers', closers: [] } as Step,
    relays: { name: 'relays', closers: [] } as Step,
    own: { name: 'resources', closers: [] } as Step,
    producers: { name: 'producers', closers: [] } as Step,
    redis: { name: 'redis', closers: [] } as Step,
    mongo: { name: 'mongo', closers: [] } as Step,
  };
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      const failures: unknown[] = [];
      for (const step of Object.values(steps)) {
        // The service's own resources close one after another, in the order declared.
        const batches = step === steps.own ? step.closers.map((closer) => [closer]) : [step.closers];
        // HTTP is not cut short: every request it accepted is answered within its own deadline
        // (REQUEST_DEADLINE_MS), and closing MongoDB under one would drop it without an answer.
        // The process's shutdown deadline (run.ts) still bounds the whole stop.
        const boundMs = step === steps.http ? undefined : STOP_STEP_MS;
        for (const batch of batches) failures.push(...(await closeWithin(step.name, batch, logger, boundMs)));
      }
      // Every step was tried; the stop still reports that it did not go cleanly.
      if (failures.length > 0) throw new AggregateError(failures, `${declaration.name}: stop failed`);
    })();
    return stopped;
  };

  try {
    // In production the indexes are the migrate Job's (docs/deploy.md): a pod that built them
    // would hold its start behind a build on a large collection, every replica at once.
    const production = config.NODE_ENV === 'production';
    const connection = await connectMongo({
      url: config.MONGO_URL,
      dbName: config.MONGO_DB,
      logger,
      autoIndex: !production,
    });
    steps.mongo.closers.push(connection);
    let indexes: IndexWatch | undefined;
    if (production) {
      indexes = await watchUniqueIndexes({
        connection,
        models: declaration.models(connection),
        logger,
        intervalMs: config.INDEX_RECHECK_MS,
      });
      steps.stats.closers.push({ close: () => indexes?.stop() });
    }
    const connectRedis = async (purpose: string) => {
      const redis = await connectFailFast(config.REDIS_URL, logger, purpose);
      steps.redis.closers.push({ close: () => quitRedis(redis) });
      return redis;
    };
    const repositories = await declaration.repositories(connection, { config, logger, connectRedis });
    await repositories.init();

    const queue = { connection: config.REDIS_URL, prefix: config.REDIS_PREFIX };
    const producerOptions = {
      ...queue,
      // Through the service's logger (its level, its redaction), not a raw stack per reconnect.
      onError: (err: Error) => logger.warn({ err: err.message }, 'queue producer: Redis error'),
    };
    const producers = {} as { [N in Q]: Producer<N> };
    for (const name of declaration.produces) {
      const producer = createProducer(name, producerOptions);
      setProducer(producers, name, producer);
      steps.producers.closers.push(producer);
    }

    // `GET /metrics`: the HTTP histogram, the queues, node's metrics, the outboxes, and whatever
    // domain metrics the service registers while it builds its parts.
    const metrics = createMetrics(declaration.name, declaration.metrics);
    const kit: ServiceKit<C, R, Q> = {
      config,
      logger,
      connection,
      repositories,
      producers,
      metrics,
      queue,
      connectRedis,
      sweeps: (name, tasks) => ({
        start: () =>
          startSweeps(name, {
            producer: producers[name],
            tasks,
            ...queue,
            onScheduleError: (err) =>
              logger.warn({ err: err.message }, `${name}: could not renew the schedules`),
            onError: (err) => logger.warn({ err: err.message }, `${name} worker: Redis error`),
          }),
      }),
    };
    const parts = await declaration.build(kit);
    steps.own.closers.push(...(parts.close ?? []));
    const degradesAround = parts.degradesAround ?? {};
    observeDegraded(metrics, degradesAround);
    const required: Record<string, HealthCheck> = {
      mongo: () => pingMongo(connection),
      ...(indexes ? { indexes: indexes.check } : {}),
    };

    const relays: OutboxRelay[] = [];
    const relayed = new Set<RelayedModel>();
    for (const relay of parts.relays ?? []) {
      const started = 'events' in relay ? startEventRelay(relay.events) : startJobRelay(relay.jobs, relay.to);
      relays.push(started);
      steps.relays.closers.push({ close: () => started.stop() });
      relayed.add('events' in relay ? relay.events : relay.jobs);
    }
    if (relayed.size > 0) metrics.observeOutboxes([...relayed]);
    // Whatever a previous run recorded but did not send goes out now, not after a poll interval.
    for (const relay of relays) relay.kick();

    if (config.RUN_WORKERS !== false) {
      for (const worker of (await parts.workers?.()) ?? []) steps.workers.closers.push(worker);
      if (parts.sweeps) steps.workers.closers.push(await parts.sweeps.start());
    }

    const queueStats = createQueueStats(declaration.queueStats, queue);
    steps.stats.closers.push(queueStats);
    metrics.observeQueues(queueStats);

    const listeners = [...(parts.api ? [apiListener(parts.api)] : []), ...(parts.listeners ?? [])];
    const started = new Map<string, ServiceListener>();
    await Promise.all(
      listeners.map(async (declared) => {
        const app = createApp(logger, {
          ...declared.app,
          deadlineMs: declared.app?.deadlineMs ?? config.REQUEST_DEADLINE_MS,
          metrics: metrics.http,
        });
        if (declared.health !== false) {
          app.use(healthRoutes({ ...required, ...declared.health }, { degraded: degradesAround }));
        }
        if (declared.metricsAt) app.use(declared.metricsAt, metricsRoutes(metrics.handler));
        declared.mount(app);
        finishApp(app, logger);
        const http: Listening = await listen(app, declared.port, declared.host);
        steps.http.closers.push(http);
        started.set(declared.name, { url: http.url, app });
      }),
    );

    return {
      ...(parts.expose as X),
      listener: (name) => {
        const found = started.get(name);
        if (!found) throw new Error(`${declaration.name} has no listener "${name}"`);
        return found;
      },
      drainOutbox: async () => {
        await Promise.all(relays.map((relay) => relay.drain()));
      },
      stop,
    };

    function startEventRelay(model: RelayedModel): OutboxRelay {
      const events = (producers as Partial<Producers<QueueName>>).events;
      if (!events)
        throw new Error(
          `${declaration.name}: an events relay needs 'events' among the queues it produces to`,
        );
      return startOutboxRelay({
        model,
        producer: metrics.relayLag(model.collection.collectionName, events),
        intervalMs: config.OUTBOX_POLL_MS,
        logger,
      });
    }

    function startJobRelay(model: RelayedModel, to: readonly Q[]): OutboxRelay {
      const chosen: { [N in QueueName]?: Producer<N> } = {};
      for (const name of to) setProducer(chosen, name, producers[name]);
      return startJobOutboxRelay({ model, producers: chosen, intervalMs: config.OUTBOX_POLL_MS, logger });
    }

    function apiListener(api: ApiDeclaration<P, O>): ListenerDeclaration {
      const secret = config.INTERNAL_SIGNING_SECRET;
      return {
        name: 'api',
        port: api.port,
        host: api.host,
        app: {
          ...(api.maxBodyBytes ? { maxBodyBytes: api.maxBodyBytes } : {}),
          deadlineMs: api.deadlineMs ?? config.REQUEST_DEADLINE_MS,
        },
        metricsAt: '/',
        mount: (app) => {
          api.open?.(app);
          const { partner, ops } = api;
          // Each API in one router mounted once, its guards and routes on the router itself, as the
          // gateway mounts its partner API: every handler given to `app.use('/api', …)` is a layer
          // of its own, and express takes the prefix off a request's URL as it enters each such
          // layer and puts it back as it leaves, so three handlers under one prefix cost every
          // request three of those rounds (about 2 µs of CPU a policy read, `npm run cpu-areas`).
          if (partner) {
            const partnerApi = Router();
            partnerApi.use(requireInternalContext(secret), answerOptions(PARTNER_ROUTES[declaration.name]));
            app.use(
              '/api',
              mountRoutes(partnerApi, partner.routes, (req) => partner.context(callerOf(req))),
            );
          }
          if (ops) {
            const opsApi = Router();
            opsApi.use(requireOpsContext(secret), answerOptions(OPS_ROUTES[declaration.name]));
            app.use(
              '/ops',
              mountRoutes(opsApi, ops.routes, () => ops.context),
            );
          }
        },
      };
    }
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

function setProducer<N extends QueueName>(
  into: { [K in N]?: Producer<K> },
  name: N,
  producer: Producer<N>,
): void {
  into[name] = producer;
}

function callerOf(req: Request): PartnerCaller {
  if (!req.context) throw new Error('requireInternalContext must run before this handler');
  return req.context;
}

async function quitRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else if (redis.status !== 'end') redis.disconnect();
}

/**
 * Closes `closers` together; a step that has not finished within `boundMs` (when given) is
 * logged, left behind and counted as a failure, so the stop goes on but does not pass for clean
 * (the process exits 1). Answers the errors of those that failed.
 */
async function closeWithin(
  step: string,
  closers: readonly Closable[],
  logger: Logger,
  boundMs: number | undefined,
): Promise<unknown[]> {
  if (closers.length === 0) return [];
  let timer: NodeJS.Timeout | undefined;
  const closing = Promise.allSettled(closers.map(async (closer) => closer.close()));
  const outcome =
    boundMs === undefined
      ? await closing
      : await Promise.race([
          closing,
          new Promise<'late'>((resolve) => {
            timer = setTimeout(() => resolve('late'), boundMs);
            timer.unref();
          }),
        ]);
  clearTimeout(timer);
  if (outcome === 'late') {
    logger.warn({ step, deadlineMs: boundMs }, 'stop: step did not finish within its bound; going on');
    return [new Error(`stop: ${step} did not finish within ${boundMs} ms`)];
  }
  return outcome.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
}
