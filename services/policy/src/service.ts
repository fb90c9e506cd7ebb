import {
  createApp,
  finishApp,
  healthRoutes,
  listen,
  requireInternalContext,
  requireOpsContext,
} from '@parametric/http';
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
  app.use(healthRoutes({ mongo: () => pingMongo(connection) }));
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
  const http = await listen(app, config.POLICY_PORT, config.POLICY_HOST);

  let stopped: Promise<void> | undefined;
  return {
    url: http.url,
    stop: () => {
      stopped ??= (async () => {
        await http.close();
        await connection.close();
      })();
      return stopped;
    },
  };
}
