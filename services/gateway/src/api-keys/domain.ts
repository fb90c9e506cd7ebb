import { AppError } from '@parametric/http';
import type { Clock } from '../clock';
import { issueCredentials } from '../credentials/secrets';
import type { TenantGatewayData } from '../repositories';
import { keyMetadata } from './view';

export interface ApiKeyDeps {
  /** Keys and secrets are stored only as HMACs under it (credentials/secrets.ts). */
  pepper: string;
  clock: Clock;
}

/** The organization's credential, bound once per process; each call names the organization. */
export function createApiKeys(deps: ApiKeyDeps) {
  return {
    metadata: apiKeyMetadata,
    rotate: (tenant: TenantGatewayData, origin: 'rot' | 'ops') => rotateCredentials(deps, tenant, origin),
    revoke: (tenant: TenantGatewayData, callerKeyHash: string | undefined) =>
      revokeApiKey(deps, tenant, callerKeyHash),
  };
}

export type ApiKeys = ReturnType<typeof createApiKeys>;

async function apiKeyMetadata(tenant: TenantGatewayData) {
  const key = await tenant.apiKey.get();
  if (!key) throw AppError.notFound('API key');
  return keyMetadata(key);
}

/**
 * Replaces the organization's credential in one write: the old key stops working on the
 * next request, and a revoked organization becomes active again (spec: revoke is
 * "reversible by rotating"). `origin` shows in the new key's prefix, and a sandbox
 * organization's new key is a sandbox key again.
 */
async function rotateCredentials(deps: ApiKeyDeps, tenant: TenantGatewayData, origin: 'rot' | 'ops') {
  const organization = await tenant.organization.get();
  const credentials = issueCredentials(deps.pepper, origin, organization?.environment ?? 'live');
  const updated = await tenant.apiKey.findOneAndUpdate(
    {},
    { $set: { ...credentials.record, active: true, rotatedAt: deps.clock(), revokedAt: null } },
  );
  if (!updated) throw AppError.notFound('API key');
  await tenant.authChanged();
  return { apiKey: credentials.apiKey, apiSecret: credentials.apiSecret };
}

/**
 * Revokes the key. Called with a key, conditional on that key's hash, so a revoke racing a
 * rotation cannot revoke the freshly rotated key; a dashboard admin revokes the current key.
 */
async function revokeApiKey(deps: ApiKeyDeps, tenant: TenantGatewayData, callerKeyHash: string | undefined) {
  const revoked = await tenant.apiKey.findOneAndUpdate(
    callerKeyHash === undefined ? {} : { keyHash: callerKeyHash },
    { $set: { active: false, revokedAt: deps.clock() } },
  );
  await tenant.authChanged();
  return revoked ? keyMetadata(revoked) : apiKeyMetadata(tenant);
}
