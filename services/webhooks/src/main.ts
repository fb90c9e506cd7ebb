import { runService } from '@parametric/runtime';
import { loadWebhooksConfig } from './config';
import { startWebhooks } from './service';

runService({
  name: 'webhooks',
  loadConfig: () => loadWebhooksConfig(),
  start: startWebhooks,
  describe: (service, config) => ({
    url: service.url,
    insecureTargetsAllowed: config.ALLOW_INSECURE_WEBHOOKS,
  }),
});
