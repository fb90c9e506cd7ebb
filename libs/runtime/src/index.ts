import { createLogger, type Logger } from '@parametric/logger';

export interface Running {
  stop(): Promise<void>;
}

/**
 * Entry point of every service process: read and validate config once, start, and on
 * SIGTERM or SIGINT stop gracefully (the service's `stop` closes HTTP first, then workers,
 * then Redis and MongoDB) and exit 0 — or 1 if start-up or shutdown fails. A signal that
 * arrives while the service is still starting stops it as soon as it has started.
 */
export function runService<C extends { LOG_LEVEL: string }, R extends Running>(options: {
  name: string;
  loadConfig: () => C;
  start: (config: C, logger: Logger) => Promise<R>;
  /** What to log once listening (URLs, not secrets). */
  describe?: (running: R, config: C) => Record<string, unknown>;
}): void {
  let logger: Logger | undefined;
  let starting: Promise<R | undefined> | undefined;
  let stopping = false;

  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger?.info({ signal }, 'shutting down');
    (starting ?? Promise.resolve(undefined))
      .then((running) => running?.stop())
      .then(
        () => process.exit(0),
        (err) => {
          logger?.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  starting = (async () => {
    const config = options.loadConfig();
    logger = createLogger({ name: options.name, level: config.LOG_LEVEL });
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
