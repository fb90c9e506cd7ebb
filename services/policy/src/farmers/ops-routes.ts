import { AppError, route, sendData, uuidParam } from '@parametric/http';
import { Router } from 'express';
import { z } from 'zod';
import { type FarmerDoc, type FarmerModel, farmerView } from './model';

const kycBody = z.strictObject({
  status: z.enum(['APPROVED', 'REJECTED'], { error: 'must be APPROVED or REJECTED' }),
});

/** Ops routes (reached through the gateway's ops API, docs/ops.md). */
export function farmerOpsRoutes(deps: { farmers: FarmerModel }): Router {
  const router = Router();
  router.post(
    '/farmers/:id/kyc',
    route({ params: z.object({ id: uuidParam }), body: kycBody }, async ({ params, body }, _req, res) => {
      // Ops acts across organizations: the farmer id alone identifies the farmer.
      const farmer = await deps.farmers
        .findOneAndUpdate(
          { _id: params.id },
          { $set: { kycStatus: body.status } },
          { returnDocument: 'after' },
        )
        .lean<FarmerDoc>();
      if (!farmer) throw AppError.notFound('Farmer');
      sendData(res, { ...farmerView(farmer), organizationId: farmer.organizationId });
    }),
  );
  return router;
}
