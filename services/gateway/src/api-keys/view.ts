import { isoOrNull } from '@parametric/contracts';
import type { ApiKeyDoc } from './model';

/** Key metadata as the spec shows it (2.10): never the key itself. */
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
