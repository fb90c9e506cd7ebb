import { runMigration } from '@parametric/runtime';
import { determinationModels } from './repositories';

// `npm run migrate -w services/determinations`; in Kubernetes, the determinations-migrate Job (docs/deploy.md).
runMigration({ name: 'determinations', models: determinationModels });
