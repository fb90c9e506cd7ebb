import { createLogger, type Logger } from '@parametric/logger';
import { type Otel, startOtel } from '@parametric/tracing';
import { onStopRequests, type StopReason } from './process';

export interface Running {
  stop(): Promise<void>;
}

/**
 * How long a graceful stop may take before the process exits anyway. Under Kubernetes'
 * default 30 s grace period and the issue's 10 s promise: a stop that waits on a store which
 * is already gone (Redis or MongoDB killed with the same Ctrl-C) must not hang for ever.
 */
export const SHUTDOWN_DEADLINE_MS = 8_000;

/**
 * Entry point of every service process: read and validate config once, start, and on a stop
 * request (SIGTERM or SIGINT; or, when a launcher started it with an IPC channel, the launcher
 * gone: see ./process.ts) stop gracefully (the service's `stop` closes HTTP first, then
 * workers, then Redis and MongoDB) and exit 0 — or 1 if start-up or shutdown fails. A request
 * that arrives while the service is still starting stops it as soon as it has started. A stop
 * that outlasts the deadline, or a second signal (past the repeat window that absorbs one
 * signal delivered twice), ends the process at once (exit 1, logged).
 */
export function runService<
  C extends { LOG_LEVEL: string; OTEL_EXPORTER_OTLP_ENDPOINT?: string; OTEL_SERVICE_NAME?: string },
  R extends Running,
>(options: {
  name: string;
  loadConfig: () => C;
  start: (config: C, logger: Logger) => Promise<R>;
  /** What to log once listening (URLs, not secrets). */
  describe?: (running: R, config: C) => Record<string, unknown>;
  shutdownDeadlineMs?: number;
}): void {
  const deadlineMs = options.shutdownDeadlineMs ?? SHUTDOWN_DEADLINE_MS;
  let logger: Logger | undefined;
  let otel: Otel | undefined;
  let starting: Promise<R | undefined> | undefined;

  const forceExit = (reason: string) => {
    if (logger) logger.error({ deadlineMs }, reason);
    else console.error(reason);
    process.exit(1);
  };

  const shutdown = (reason: StopReason) => {
    logger?.info(reason === 'parent gone' ? { reason } : { signal: reason }, 'shutting down');
    // Not unref'd: the timer must fire even if everything else is waiting on a dead socket.
    setTimeout(
      () => forceExit('graceful shutdown did not finish within the deadline: forcing exit'),
      deadlineMs,
    );
    (starting ?? Promise.resolve(undefined))
      .then((running) => running?.stop())
      // The last spans (the shutdown's own included) go out before the process exits.
      .then(() => otel?.shutdown())
      .then(
        () => process.exit(0),
        (err) => {
          logger?.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  onStopRequests({
    stop: shutdown,
    force: (signal) => forceExit(`second ${signal} while stopping: exiting without waiting`),
  });

  starting = (async () => {
    const config = options.loadConfig();
    logger = createLogger({ name: options.name, level: config.LOG_LEVEL });
    otel = await startSpanExport(config, options.name);
    if (otel && config.OTEL_EXPORTER_OTLP_ENDPOINT) {
      const endpoint = new URL(config.OTEL_EXPORTER_OTLP_ENDPOINT).origin;
      logger.info({ endpoint }, 'exporting spans over OTLP');
    }
    const running = await options.start(config, logger);
    logger.info(options.describe?.(running, config) ?? {}, `${options.name} listening`);
    return running;
  })();
  starting.catch((err) => {
    // Config errors list variables, never values; anything else is a start-up failure.
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}

/**
 * Span export as the service's config says: on (OTLP/HTTP to `OTEL_EXPORTER_OTLP_ENDPOINT`)
 * only when the variable is set; otherwise nothing is started, loaded or sent.
 */
export async function startSpanExport(
  config: { OTEL_EXPORTER_OTLP_ENDPOINT?: string; OTEL_SERVICE_NAME?: string },
  name: string,
): Promise<Otel | undefined> {
  if (!config.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  return startOtel({
    endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    serviceName: config.OTEL_SERVICE_NAME ?? name,
  });
}
