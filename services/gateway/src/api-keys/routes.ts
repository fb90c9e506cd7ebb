import { AppError, sendData } from '@parametric/http';
import { Router } from 'express';
import { principalOf } from '../auth/principal';
import { issueCredentials, keyMetadata } from './credentials';
import type { ApiKeyDoc, ApiKeyModel } from './model';

/**
 * Replaces the organization's credential in one write: the old key stops working on the
 * next request, and a revoked organization becomes active again (spec: revoke is
 * "reversible by rotating").
 */
export async function rotateCredentials(
  apiKeys: ApiKeyModel,
  pepper: string,
  organizationId: string,
  origin: 'rot' | 'ops',
) {
  const credentials = issueCredentials(pepper, origin);
  const updated = await apiKeys.findOneAndUpdate(
    { _id: organizationId },
    { $set: { ...credentials.record, active: true, rotatedAt: new Date(), revokedAt: null } },
    { returnDocument: 'after' },
  );
  if (!updated) throw AppError.notFound('API key');
  return { apiKey: credentials.apiKey, apiSecret: credentials.apiSecret };
}

/** `GET|POST /organizations/me/api-key[/rotate|/revoke]` (spec 2.10, 4). The key is ORG_ADMIN. */
export function apiKeyRoutes(deps: { apiKeys: ApiKeyModel; pepper: string }): Router {
  const router = Router();
  const own = async (organizationId: string) => {
    const key = await deps.apiKeys.findById(organizationId).lean<ApiKeyDoc>();
    if (!key) throw AppError.notFound('API key');
    return key;
  };

  router.get('/organizations/me/api-key', async (req, res) => {
    sendData(res, keyMetadata(await own(principalOf(req).organization._id)));
  });

  router.post('/organizations/me/api-key/rotate', async (req, res) => {
    sendData(
      res,
      await rotateCredentials(deps.apiKeys, deps.pepper, principalOf(req).organization._id, 'rot'),
    );
  });

  router.post('/organizations/me/api-key/revoke', async (req, res) => {
    const { keyHash, organization } = principalOf(req);
    // Conditional on the key that authenticated this call, so a revoke racing a rotation
    // cannot revoke the freshly rotated key.
    const revoked = await deps.apiKeys
      .findOneAndUpdate(
        { _id: organization._id, keyHash },
        { $set: { active: false, revokedAt: new Date() } },
        { returnDocument: 'after' },
      )
      .lean<ApiKeyDoc>();
    sendData(res, keyMetadata(revoked ?? (await own(organization._id))));
  });
  return router;
}
