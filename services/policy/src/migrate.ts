import { runMigration } from '@parametric/runtime';
import { policyModels } from './repositories';

// `npm run migrate -w services/policy`; in Kubernetes, the policy-migrate Job (docs/deploy.md).
runMigration({ name: 'policy', models: policyModels });
