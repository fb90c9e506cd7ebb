import { runService } from '@parametric/runtime';
import { loadPaymentsConfig } from './config';
import { startPayments } from './service';

runService({
  name: 'payments',
  loadConfig: () => loadPaymentsConfig(),
  start: startPayments,
  describe: (service) => ({ url: service.url, callbackUrl: service.callbackUrl }),
});
