import { AppError, organizationOf, route, sendData, uuidParam } from '@parametric/http';
import { scopedTo } from '@parametric/mongo';
import { Router } from 'express';
import { z } from 'zod';
import { estimatedValue, headCount, latitude, longitude, name } from '../bounds';
import type { FarmerModel } from '../farmers/model';
import { plotFields } from '../farmers/routes';
import { type HerdDoc, type HerdModel, herdView } from '../herds/model';
import { type PlotDoc, type PlotModel, plotView } from './model';

const farmerId = z.uuid({ error: 'must be a uuid' });
const plotBody = z.strictObject({ farmerId, ...plotFields });
const herdBody = z.strictObject({ farmerId, name, headCount, estimatedValue, latitude, longitude });
const idParams = z.object({ id: uuidParam });

/** `POST/GET /plots` and `/herds` (spec 4): each belongs to a farmer of the calling organization. */
export function plotAndHerdRoutes(deps: {
  farmers: FarmerModel;
  plots: PlotModel;
  herds: HerdModel;
}): Router {
  const router = Router();
  const requireFarmer = async (organizationId: string, id: string) => {
    // Another organization's farmer is indistinguishable from an unknown one.
    if (!(await scopedTo(deps.farmers, organizationId).exists({ _id: id })))
      throw AppError.notFound('Farmer');
  };

  router.post(
    '/plots',
    route({ body: plotBody }, async ({ body }, req, res) => {
      const organizationId = organizationOf(req);
      await requireFarmer(organizationId, body.farmerId);
      const plot = await scopedTo(deps.plots, organizationId).create(body);
      sendData(res, plotView(plot.toObject() as PlotDoc), 201);
    }),
  );

  router.get(
    '/plots/:id',
    route({ params: idParams }, async ({ params }, req, res) => {
      const plot = await scopedTo(deps.plots, organizationOf(req)).findById(params.id).lean<PlotDoc>();
      if (!plot) throw AppError.notFound('Plot');
      sendData(res, plotView(plot));
    }),
  );

  router.post(
    '/herds',
    route({ body: herdBody }, async ({ body }, req, res) => {
      const organizationId = organizationOf(req);
      await requireFarmer(organizationId, body.farmerId);
      const herd = await scopedTo(deps.herds, organizationId).create(body);
      sendData(res, herdView(herd.toObject() as HerdDoc), 201);
    }),
  );

  router.get(
    '/herds/:id',
    route({ params: idParams }, async ({ params }, req, res) => {
      const herd = await scopedTo(deps.herds, organizationOf(req)).findById(params.id).lean<HerdDoc>();
      if (!herd) throw AppError.notFound('Herd');
      sendData(res, herdView(herd));
    }),
  );
  return router;
}
