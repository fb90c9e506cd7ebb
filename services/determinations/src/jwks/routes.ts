import { getJwks } from '@parametric/contracts';
import { type Binding, implement, raw } from '@parametric/http';
import { publishedKeySet, type SigningKeys } from '../signing/keys';

/**
 * How long partners and caches may keep the key set. A new key is published (listed after the
 * active one) for longer than this before it signs: docs/deploy.md, "Rotating the signing key".
 */
export const JWKS_MAX_AGE_SECONDS = 300;

/**
 * The public keys, active first, then retired ones (older determinations still verify), then the
 * sandbox keys, marked (signing/keys.ts `publishedKeySet`).
 */
export function jwksRoutes(keys: SigningKeys, sandbox?: SigningKeys): Binding<undefined>[] {
  const body = JSON.stringify(publishedKeySet(keys, sandbox));
  return [implement(getJwks, async () => raw(body))];
}
