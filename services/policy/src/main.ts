import { runService } from '@parametric/runtime';
import { loadPolicyConfig } from './config';
import { startPolicy } from './service';

runService({
  name: 'policy',
  loadConfig: () => loadPolicyConfig(),
  start: startPolicy,
  describe: (service) => ({ url: service.url }),
});
