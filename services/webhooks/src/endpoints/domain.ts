import { AppError } from '@parametric/http';
import { isDuplicateKey } from '@parametric/mongo';
import { checkWebhookTarget } from '../delivery/target-guard';
import type { TenantWebhooks } from '../repositories';
import type { EndpointDoc } from './model';
import { decryptSecret, encryptSecret, generateSigningSecret } from './secret-box';

export interface SecretKeys {
  secretKey: string;
  allowInsecure: boolean;
}

/** `{ url, secretSet, secret }` (docs/webhooks.md); the secret is shown to its organization only. */
export function configView(endpoint: EndpointDoc | null, secretKey: string) {
  if (!endpoint) return { url: null, secretSet: false, secret: null };
  return { url: endpoint.url, secretSet: true, secret: decryptSecret(endpoint.secretSealed, secretKey) };
}

export async function webhookConfig(tenant: TenantWebhooks, keys: SecretKeys) {
  return configView(await tenant.endpoint.get(), keys.secretKey);
}

/**
 * Sets the organization's URL after the SSRF rules accept it. The secret is generated once,
 * with the first URL; changing the URL keeps it.
 */
export async function setWebhookUrl(tenant: TenantWebhooks, rawUrl: string, keys: SecretKeys) {
  const check = await checkWebhookTarget(rawUrl, { allowInsecure: keys.allowInsecure });
  if (!check.ok) throw AppError.invalid('Invalid webhook URL', [{ field: 'url', message: check.reason }]);
  const upsert = () =>
    tenant.endpoint.upsert({
      $set: { url: check.url.toString() },
      $setOnInsert: { secretSealed: encryptSecret(generateSigningSecret(), keys.secretKey) },
    });
  // Two first-time PUTs racing: one insert wins, the other retries as an update.
  const endpoint = await upsert().catch((err) => (isDuplicateKey(err) ? upsert() : Promise.reject(err)));
  return configView(endpoint, keys.secretKey);
}

/** A new secret, returned once; deliveries signed with the old one stop verifying at once. */
export async function rotateSigningSecret(tenant: TenantWebhooks, keys: SecretKeys) {
  const secret = generateSigningSecret();
  const rotated = await tenant.endpoint.findOneAndUpdate(
    {},
    { $set: { secretSealed: encryptSecret(secret, keys.secretKey), secretRotatedAt: new Date() } },
  );
  if (!rotated) throw AppError.invalid('No webhook URL is configured');
  return { secret };
}
