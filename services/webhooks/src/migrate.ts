import { runMigration } from '@parametric/runtime';
import { webhookModels } from './repositories';

// `npm run migrate -w services/webhooks`; in Kubernetes, the webhooks-migrate Job (docs/deploy.md).
runMigration({ name: 'webhooks', models: webhookModels });
