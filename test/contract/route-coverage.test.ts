import { OPS_ROUTES, PARTNER_ROUTES } from '@parametric/contracts';
import { expressPath, type RouteContract } from '@parametric/http';
import { createLogger } from '@parametric/logger';
import { type RunningPolicy, startPolicy } from '../../services/policy/src/service';
import { policyTestConfig } from '../../services/policy/test/support';
import { type RunningWebhooks, startWebhooks } from '../../services/webhooks/src/service';
import { webhooksTestConfig } from '../../services/webhooks/test/support';
import { mountedRoutes } from './express-routes';

/**
 * Each service mounts exactly the routes its contracts declare: a route the OpenAPI document
 * lacks (or a declared one nobody serves) fails here. The gateway's own check is in
 * services/gateway/test/docs.test.ts.
 */

const declared = (routes: readonly RouteContract[]) =>
  routes.map((r) => `${r.method.toUpperCase()} ${expressPath(r.path)}`).sort();
const notInfrastructure = (route: string) => !/ \/(healthz|readyz|metrics)$/.test(route);
const logger = createLogger({ name: 'route-coverage', level: 'silent' });

let policy: RunningPolicy;
let webhooks: RunningWebhooks;

beforeAll(async () => {
  policy = await startPolicy((await policyTestConfig({ RUN_WORKERS: 'false' })).config, logger);
  webhooks = await startWebhooks(webhooksTestConfig({ RUN_WORKERS: 'false' }), logger);
});

afterAll(async () => {
  await Promise.all([policy?.stop(), webhooks?.stop()]);
});

it('the policy service mounts its partner and ops routes, and nothing else', () => {
  expect(mountedRoutes(policy.app).filter(notInfrastructure)).toEqual(
    declared([...PARTNER_ROUTES.policy, ...OPS_ROUTES.policy]),
  );
});

it('the webhooks service mounts its partner routes, and nothing else', () => {
  expect(mountedRoutes(webhooks.app).filter(notInfrastructure)).toEqual(declared(PARTNER_ROUTES.webhooks));
});

it('every declared route belongs to exactly one service, once', () => {
  const all = [...Object.values(PARTNER_ROUTES).flat(), ...Object.values(OPS_ROUTES).flat()];
  const ids = all.map((r) => r.operationId);
  expect(new Set(ids).size).toBe(ids.length);
});
