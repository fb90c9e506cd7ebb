import { randomUUID } from 'node:crypto';
import { AppError, signContext } from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { currentTrace, outbound } from '@parametric/tracing';
import { StampedCache } from '../auth/principal-cache';
import type { Upstreams } from './upstreams';

export type WebhookUrlOf = (organizationId: string, version?: string) => Promise<string | null>;

/**
 * The organization's webhook URL, owned by the webhooks service (the partner's `Organization`
 * shows it: libs/contracts/src/gateway.ts). A platform without a webhooks service has no URL to
 * show (null). If the service is configured but does not answer in time, the read fails with
 * `503 SERVICE_UNAVAILABLE` rather than claiming there is no URL.
 *
 * Asked with the organization's version stamp as the request saw it (auth/versions.ts), the
 * URL is remembered under that stamp: only a partner's `PUT /organizations/me/webhook` changes
 * it, and the gateway that forwards one replaces the stamp, so every replica asks again on its
 * next read. Without a stamp (Redis not answering), the service is asked every time.
 */
export function webhookUrlLookup(deps: {
  webhooksUrl?: string;
  signingSecret: string;
  logger: Logger;
  upstreams: Upstreams;
  timeoutMs?: number;
  cache?: { maxEntries: number; maxAgeMs: number };
}): WebhookUrlOf {
  const cache = new StampedCache<string | null>(
    deps.cache?.maxEntries ?? 100_000,
    deps.cache?.maxAgeMs ?? 300_000,
  );
  const ask = async (base: string, organizationId: string): Promise<string | null> => {
    try {
      // Part of the request that needs the URL: its request id and trace, when there is one.
      const requestId = currentTrace()?.reqId ?? randomUUID();
      const res = await outbound('GET webhooks', (traceparent) =>
        deps.upstreams.request(base, '/api/organizations/me/webhook', {
          method: 'GET',
          headers: {
            accept: 'application/json',
            'x-request-id': requestId,
            ...(traceparent ? { traceparent } : {}),
            // issuedAt: the webhooks service checks it against its own system clock.
            ...signContext(
              { organizationId, role: 'ORG_ADMIN', requestId, issuedAt: Date.now() },
              deps.signingSecret,
            ),
          },
          timeoutMs: deps.timeoutMs ?? 2_000,
        }),
      );
      if (res.status < 200 || res.status >= 300) throw new Error(`webhooks service answered ${res.status}`);
      const body = JSON.parse(res.text) as { data?: { url?: unknown } };
      return typeof body.data?.url === 'string' ? body.data.url : null;
    } catch (err) {
      deps.logger.warn({ err: (err as Error).message, organizationId }, 'could not read the webhook URL');
      throw new AppError('SERVICE_UNAVAILABLE', 'The webhooks service is not available, try again shortly');
    }
  };
  return async (organizationId, version) => {
    const base = deps.webhooksUrl;
    if (!base) return null;
    if (version === undefined) return ask(base, organizationId);
    const cached = cache.get(organizationId);
    if (cached && cached.version === version) return cached.value;
    const url = await ask(base, organizationId);
    cache.set(organizationId, organizationId, version, url);
    return url;
  };
}
