import { createLogger } from '@parametric/logger';
import { loadWebhooksConfig } from './config';
import { startWebhooks } from './service';

async function main(): Promise<void> {
  const config = loadWebhooksConfig();
  const logger = createLogger({ name: 'webhooks', level: config.LOG_LEVEL });
  const service = await startWebhooks(config, logger);
  logger.info(
    { url: service.url, insecureTargetsAllowed: config.ALLOW_INSECURE_WEBHOOKS },
    'webhooks listening',
  );
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    service.stop().then(
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
