import { randomUUID } from 'node:crypto';
import { AppError, signContext } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import type { Upstreams } from '../forwarding/upstreams';

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
  upstreams: Upstreams;
  timeoutMs?: number;
}) {
  return async (organizationId: string): Promise<string | null> => {
    if (!deps.webhooksUrl) return null;
    try {
      const requestId = randomUUID();
      const res = await deps.upstreams.request(deps.webhooksUrl, '/api/organizations/me/webhook', {
        method: 'GET',
        headers: {
          accept: 'application/json',
          'x-request-id': requestId,
          ...signContext(
            { organizationId, role: 'ORG_ADMIN', requestId, issuedAt: Date.now() },
            deps.signingSecret,
          ),
        },
        timeoutMs: deps.timeoutMs ?? 2_000,
      });
      if (res.status < 200 || res.status >= 300) throw new Error(`webhooks service answered ${res.status}`);
      const body = JSON.parse(res.text) as { data?: { url?: unknown } };
      return typeof body.data?.url === 'string' ? body.data.url : null;
    } catch (err) {
      deps.logger.warn({ err: (err as Error).message, organizationId }, 'could not read the webhook URL');
      throw new AppError('SERVICE_UNAVAILABLE', 'The webhooks service is not available, try again shortly');
    }
  };
}
