import { isoOrNull, type OpsClientScope } from '@parametric/contracts';
import type { OpsClientDoc } from './model';

/** A machine client as ops read it: never the secret's hash. */
export function opsClientView(client: OpsClientDoc) {
  return {
    id: client._id,
    name: client.name,
    scopes: [...client.scopes] as OpsClientScope[],
    status: client.status,
    lastTokenAt: isoOrNull(client.lastTokenAt),
    secretRotatedAt: isoOrNull(client.secretRotatedAt),
    revokedAt: isoOrNull(client.revokedAt),
    createdAt: client.createdAt.toISOString(),
    updatedAt: client.updatedAt.toISOString(),
  };
}
