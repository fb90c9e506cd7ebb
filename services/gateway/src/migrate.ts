import { runMigration } from '@parametric/runtime';
import { gatewayModels } from './repositories';

// `npm run migrate -w services/gateway`; in Kubernetes, the gateway-migrate Job (docs/deploy.md).
runMigration({ name: 'gateway', models: gatewayModels });
