import { createLogger } from '@parametric/logger';
import { loadGatewayConfig } from './config';
import { startGateway } from './gateway';

/** Process entry point: config once from the environment, then run until SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const config = loadGatewayConfig();
  const logger = createLogger({ name: 'gateway', level: config.LOG_LEVEL });
  const gateway = await startGateway(config, logger);
  logger.info({ partnerUrl: gateway.partnerUrl, opsUrl: gateway.opsUrl }, 'gateway listening');

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    gateway.stop().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
