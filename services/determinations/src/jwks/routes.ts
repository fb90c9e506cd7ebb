import { getJwks } from '@parametric/contracts';
import { type Binding, implement, raw } from '@parametric/http';
import type { SigningKeys } from '../signing/keys';

/**
 * How long partners and caches may keep the key set. A new key is published (listed after the
 * active one) for longer than this before it signs: docs/deploy.md, "Rotating the signing key".
 */
export const JWKS_MAX_AGE_SECONDS = 300;

/** The public keys, active first, then retired ones (older determinations still verify). */
export function jwksRoutes(keys: SigningKeys): Binding<undefined>[] {
  const body = JSON.stringify(keys.jwks);
  return [implement(getJwks, async () => raw(body))];
}
