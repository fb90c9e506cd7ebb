import type { AddressInfo } from 'node:net';
import { createApp, finishApp, requireInternalContext, requireOpsContext } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { connectMongo, pingMongo } from '@parametric/mongo';
import type { PolicyConfig } from './config';
import { farmerModel } from './farmers/model';
import { farmerOpsRoutes } from './farmers/ops-routes';
import { farmerRoutes } from './farmers/routes';
import { herdModel } from './herds/model';
import { plotModel } from './plots/model';
import { plotAndHerdRoutes } from './plots/routes';
import { policyModel } from './policies/model';
import { policyRoutes } from './policies/routes';
import { capacityModel, licenceModel } from './underwriting/model';
import { underwritingOpsRoutes } from './underwriting/ops-routes';

export interface RunningPolicy {
  url: string;
  stop(): Promise<void>;
}

/** The policy service: farmers, plots and herds (policies follow), behind the gateway. */
export async function startPolicy(config: PolicyConfig, logger: Logger): Promise<RunningPolicy> {
  const connection = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  const farmers = farmerModel(connection);
  const plots = plotModel(connection);
  const herds = herdModel(connection);
  const licences = licenceModel(connection);
  const capacity = capacityModel(connection);
  const policies = policyModel(connection);
  await Promise.all([
    farmers.init(),
    plots.init(),
    herds.init(),
    licences.init(),
    capacity.init(),
    policies.init(),
  ]);

  const app = createApp(logger);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const mongo = await pingMongo(connection);
    res.status(mongo ? 200 : 503).json({ status: mongo ? 'ready' : 'not ready', checks: { mongo } });
  });
  app.use(
    '/api',
    requireInternalContext(config.INTERNAL_SIGNING_SECRET),
    farmerRoutes({ farmers, plots, herds }),
    plotAndHerdRoutes({ farmers, plots, herds }),
    policyRoutes({ policies, farmers, plots, herds, licences, capacity }),
  );
  app.use(
    '/ops',
    requireOpsContext(config.INTERNAL_SIGNING_SECRET),
    farmerOpsRoutes({ farmers }),
    underwritingOpsRoutes({ licences, capacity }),
  );
  finishApp(app, logger);
  const server = app.listen(config.POLICY_PORT, config.POLICY_HOST);
  await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { port } = server.address() as AddressInfo;

  let stopped: Promise<void> | undefined;
  return {
    url: `http://${config.POLICY_HOST === '0.0.0.0' ? '127.0.0.1' : config.POLICY_HOST}:${port}`,
    stop: () => {
      stopped ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await connection.close();
      })();
      return stopped;
    },
  };
}
