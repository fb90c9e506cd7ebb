import { runService } from '@parametric/runtime';
import { loadDeterminationsConfig } from './config';
import { startDeterminations } from './service';

runService({
  name: 'determinations',
  loadConfig: () => loadDeterminationsConfig(),
  start: startDeterminations,
  describe: (service) => ({ url: service.url }),
});
