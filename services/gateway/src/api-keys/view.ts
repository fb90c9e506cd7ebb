import { isoOrNull } from '@parametric/contracts';
import type { ApiKeyDoc } from './model';

/** Key metadata as partners read it (docs/api.md, "Authentication"): never the key itself. */
export function keyMetadata(key: ApiKeyDoc) {
  return {
    keyPrefix: key.keyPrefix,
    last4: key.last4,
    masked: `${key.keyPrefix}${'*'.repeat(8)}${key.last4}`,
    active: key.active,
    rotatedAt: isoOrNull(key.rotatedAt),
    createdAt: key.createdAt.toISOString(),
  };
}
