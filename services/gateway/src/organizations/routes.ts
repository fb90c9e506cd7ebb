import { AppError, route, sendData } from '@parametric/http';
import { Router } from 'express';
import { z } from 'zod';
import { issueCredentials } from '../api-keys/credentials';
import type { ApiKeyModel } from '../api-keys/model';
import { principalOf } from '../auth/principal';
import { MARKETS, ORGANIZATION_TYPES, type OrganizationDoc, type OrganizationModel } from './model';
import { organizationView, settingsView } from './view';

export const E164 = /^\+[1-9]\d{7,14}$/;
const markets = Object.keys(MARKETS) as [keyof typeof MARKETS, ...Array<keyof typeof MARKETS>];

const registrationBody = z.strictObject({
  name: z.string().trim().min(2, 'must be 2 to 200 characters').max(200, 'must be 2 to 200 characters'),
  type: z.enum(ORGANIZATION_TYPES, { error: `must be one of ${ORGANIZATION_TYPES.join(', ')}` }),
  countryCode: z.enum(markets, { error: `must be one of the markets we serve: ${markets.join(', ')}` }),
  contactEmail: z.email({ error: 'must be an email address' }).max(254).optional(),
  contactPhone: z.string().regex(E164, 'must be an E.164 phone number, e.g. +254712345678').optional(),
});

/**
 * Settings accept exactly two keys; anything else is dropped without an error (spec 4), so
 * this schema strips instead of rejecting. `null` clears a value.
 */
const settingsBody = z.object({
  brandColor: z
    .string()
    .regex(/^#[0-9A-Fa-f]{6}$/, 'must be a hex colour like #1A2B3C')
    .nullable()
    .optional(),
  contactPhone: z
    .string()
    .regex(E164, 'must be an E.164 phone number, e.g. +254712345678')
    .nullable()
    .optional(),
});

export interface OrganizationRouteDeps {
  organizations: OrganizationModel;
  apiKeys: ApiKeyModel;
  pepper: string;
  webhookUrlOf: (organizationId: string) => Promise<string | null>;
}

/** `POST /auth/register-organization`: the one partner route without a key. */
export function registrationRoutes(deps: OrganizationRouteDeps): Router {
  const router = Router();
  router.post(
    '/auth/register-organization',
    route({ body: registrationBody }, async ({ body }, _req, res) => {
      const organization = await deps.organizations.create({
        name: body.name,
        type: body.type,
        countryCode: body.countryCode,
        contactEmail: body.contactEmail ?? null,
        contactPhone: body.contactPhone ?? null,
      });
      const credentials = issueCredentials(deps.pepper, 'reg');
      try {
        await deps.apiKeys.create({ _id: organization._id, ...credentials.record });
      } catch (err) {
        // An organization nobody can authenticate as is worse than none.
        await deps.organizations.deleteOne({ _id: organization._id });
        throw err;
      }
      const view = organizationView(organization.toObject() as OrganizationDoc);
      sendData(
        res,
        { organization: { ...view, apiKey: credentials.apiKey, apiSecret: credentials.apiSecret } },
        201,
      );
    }),
  );
  return router;
}

/** `GET /organizations/me` and `PUT /organizations/me/settings`. */
export function organizationRoutes(deps: OrganizationRouteDeps): Router {
  const router = Router();
  router.get('/organizations/me', async (req, res) => {
    const { organization } = principalOf(req);
    sendData(res, organizationView(organization, await deps.webhookUrlOf(organization._id)));
  });

  router.put(
    '/organizations/me/settings',
    route({ body: settingsBody }, async ({ body }, req, res) => {
      const { organization } = principalOf(req);
      const changes: Partial<Pick<OrganizationDoc, 'brandColor' | 'contactPhone'>> = {};
      if (body.brandColor !== undefined) changes.brandColor = body.brandColor;
      if (body.contactPhone !== undefined) changes.contactPhone = body.contactPhone;
      const updated = await deps.organizations
        .findOneAndUpdate({ _id: organization._id }, { $set: changes }, { returnDocument: 'after' })
        .lean<OrganizationDoc>();
      if (!updated) throw AppError.notFound('Organization');
      sendData(res, settingsView(updated));
    }),
  );
  return router;
}
