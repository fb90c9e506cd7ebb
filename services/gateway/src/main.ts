import { runService } from '@parametric/runtime';
import { loadGatewayConfig } from './config';
import { startGateway } from './gateway';

runService({
  name: 'gateway',
  loadConfig: () => loadGatewayConfig(),
  start: startGateway,
  describe: (gateway) => ({ partnerUrl: gateway.partnerUrl, opsUrl: gateway.opsUrl }),
});
