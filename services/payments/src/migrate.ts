import { runMigration } from '@parametric/runtime';
import { paymentModels } from './repositories';

// `npm run migrate -w services/payments`; in Kubernetes, the payments-migrate Job (docs/deploy.md).
runMigration({ name: 'payments', models: paymentModels });
