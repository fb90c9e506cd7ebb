import type { TenantPayments } from './repositories';
import type { Environment } from './sandbox';

/**
 * What a partner request's handler gets: the calling organization's data and its market, nothing
 * wider. Everything else (the provider, the rate source, the lookups) is built once per process
 * and handed to the route factories.
 */
export interface PartnerContext {
  tenant: TenantPayments;
  /** The organization's market, as the gateway signed it. */
  market: string;
  /** The organization's environment, as the gateway signed it (absent there: live). */
  environment: Environment;
}
