import { timingSafeEqual } from 'node:crypto';
import { createEvent, outboxUpdate } from '@parametric/events';
import { AppError, invalidInput, route, sendData, uuidParam } from '@parametric/http';
import { type NextFunction, type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { keyMetadata } from '../api-keys/credentials';
import type { ApiKeyDoc, ApiKeyModel } from '../api-keys/model';
import { rotateCredentials } from '../api-keys/routes';
import { type OrganizationDoc, type OrganizationModel, SERVICE_TIERS } from '../organizations/model';
import { organizationView } from '../organizations/view';

export interface OpsDeps {
  organizations: OrganizationModel;
  apiKeys: ApiKeyModel;
  pepper: string;
  opsToken: string;
  /** Called after a write that recorded an event, so the relay picks it up at once. */
  onEventRecorded: () => void;
}

/** `Authorization: Bearer <OPS_TOKEN>`, compared in constant time. */
export function requireOpsToken(token: string) {
  const expected = Buffer.from(token);
  return (req: Request, _res: Response, next: NextFunction): void => {
    const header = req.headers.authorization ?? '';
    const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      next(AppError.unauthorized('A valid ops bearer token is required'));
      return;
    }
    next();
  };
}

const idParams = z.object({ id: uuidParam });
const kybBody = z.strictObject({
  status: z.enum(['VERIFIED', 'REJECTED'], { error: 'must be VERIFIED or REJECTED' }),
  notes: z.string().trim().max(2000).optional(),
});
const tierBody = z.strictObject({
  serviceTier: z.enum(SERVICE_TIERS, { error: `must be one of ${SERVICE_TIERS.join(', ')}` }),
});

/** The ops interface (docs/ops.md): admin actions partners cannot take themselves. */
export function opsRoutes(deps: OpsDeps): Router {
  const router = Router();
  const load = async (id: string) => {
    const org = await deps.organizations.findById(id).lean<OrganizationDoc>();
    if (!org) throw AppError.notFound('Organization');
    return org;
  };
  const opsView = async (org: OrganizationDoc) => {
    const key = await deps.apiKeys.findById(org._id).lean<ApiKeyDoc>();
    return {
      ...organizationView(org),
      kybNotes: org.kybNotes ?? null,
      kybUpdatedAt: org.kybUpdatedAt ?? null,
      apiKey: key ? keyMetadata(key) : null,
    };
  };

  router.get(
    '/ops/organizations/:id',
    route({ params: idParams }, async ({ params }, _req, res) => {
      sendData(res, await opsView(await load(params.id)));
    }),
  );

  router.post(
    '/ops/organizations/:id/kyb',
    route({ params: idParams, body: kybBody }, async ({ params, body }, _req, res) => {
      const kybStatus = body.status;
      const notes = body.notes ?? null;
      const event =
        kybStatus === 'VERIFIED'
          ? createEvent('kyb.verified', params.id, { organizationId: params.id, kybStatus })
          : createEvent('kyb.rejected', params.id, { organizationId: params.id, kybStatus, notes });
      // The status change and its event are one document write: both happen or neither.
      // Repeating the current status changes nothing and emits nothing.
      const outbox = outboxUpdate(event);
      const updated = await deps.organizations
        .findOneAndUpdate(
          { _id: params.id, kybStatus: { $ne: kybStatus } },
          { ...outbox, $set: { ...outbox.$set, kybStatus, kybNotes: notes, kybUpdatedAt: new Date() } },
          { returnDocument: 'after' },
        )
        .lean<OrganizationDoc>();
      if (updated) deps.onEventRecorded();
      sendData(res, await opsView(updated ?? (await load(params.id))));
    }),
  );

  router.post(
    '/ops/organizations/:id/service-tier',
    route({ params: idParams, body: tierBody }, async ({ params, body }, _req, res) => {
      await load(params.id);
      const updated = await deps.organizations
        .findOneAndUpdate(
          { _id: params.id },
          { $set: { serviceTier: body.serviceTier } },
          { returnDocument: 'after' },
        )
        .lean<OrganizationDoc>();
      sendData(res, await opsView(updated as OrganizationDoc));
    }),
  );

  for (const [action, isActive] of [
    ['deactivate', false],
    ['activate', true],
  ] as const) {
    router.post(
      `/ops/organizations/:id/${action}`,
      route({ params: idParams }, async ({ params }, _req, res) => {
        const updated = await deps.organizations
          .findOneAndUpdate({ _id: params.id }, { $set: { isActive } }, { returnDocument: 'after' })
          .lean<OrganizationDoc>();
        if (!updated) throw AppError.notFound('Organization');
        sendData(res, await opsView(updated));
      }),
    );
  }

  // Underwriting lives in the policy service; make sure the organization exists before the
  // request is forwarded there (the policy service cannot tell).
  for (const sub of ['licences', 'capacity', 'underwriting']) {
    router.all(`/ops/organizations/:id/${sub}`, async (req: Request, _res: Response, next: NextFunction) => {
      const parsed = idParams.safeParse(req.params);
      if (!parsed.success) return next(invalidInput(parsed.error, 'path parameters'));
      await load(parsed.data.id);
      next();
    });
  }

  router.post(
    '/ops/organizations/:id/api-key/rotate',
    route({ params: idParams }, async ({ params }, _req, res) => {
      await load(params.id);
      sendData(res, await rotateCredentials(deps.apiKeys, deps.pepper, params.id, 'ops'));
    }),
  );
  return router;
}
