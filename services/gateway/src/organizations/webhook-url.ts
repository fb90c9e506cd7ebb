import { randomUUID } from 'node:crypto';
import { AppError, signContext } from '@parametric/http';
import type { Logger } from '@parametric/logger';

/**
 * The organization's webhook URL, owned by the webhooks service (spec 2.2 shows it on the
 * organization). A platform without a webhooks service has no URL to show (null). If the
 * service is configured but does not answer in time, the read fails with `503
 * SERVICE_UNAVAILABLE` rather than claiming there is no URL.
 */
export function webhookUrlLookup(deps: {
  webhooksUrl?: string;
  signingSecret: string;
  logger: Logger;
  timeoutMs?: number;
}) {
  return async (organizationId: string): Promise<string | null> => {
    if (!deps.webhooksUrl) return null;
    try {
      const requestId = randomUUID();
      const res = await fetch(`${deps.webhooksUrl}/api/organizations/me/webhook`, {
        headers: {
          accept: 'application/json',
          'x-request-id': requestId,
          ...signContext(
            { organizationId, role: 'ORG_ADMIN', requestId, issuedAt: Date.now() },
            deps.signingSecret,
          ),
        },
        signal: AbortSignal.timeout(deps.timeoutMs ?? 2_000),
      });
      if (!res.ok) throw new Error(`webhooks service answered ${res.status}`);
      const body = (await res.json()) as { data?: { url?: unknown } };
      return typeof body.data?.url === 'string' ? body.data.url : null;
    } catch (err) {
      deps.logger.warn({ err: (err as Error).message, organizationId }, 'could not read the webhook URL');
      throw new AppError('SERVICE_UNAVAILABLE', 'The webhooks service is not available, try again shortly');
    }
  };
}
