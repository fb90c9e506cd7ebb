import type { PolicyLookup } from '@parametric/policy-client';
import type { Clock } from './clock';
import type { PremiumState } from './metrics';
import type { PremiumProvider } from './premiums/provider';
import type { TenantPayments } from './repositories';

/** What a partner request's handler may touch: the calling organization's data, nothing wider. */
export interface PartnerContext {
  tenant: TenantPayments;
  /** The organization's market, as the gateway signed it. */
  market: string;
  findPolicy: PolicyLookup;
  provider: PremiumProvider;
  /** Where Daraja posts the STK result (the callback listener, token in the path). */
  stkCallbackUrl: string;
  /** Takes up callbacks that arrived before the prompt's id was stored. */
  afterPrompt(checkoutRequestId: string): Promise<void>;
  now: Clock;
  /** `premium_collections_total` (counted by the domain where the change is committed). */
  onPremium?: (state: PremiumState) => void;
}
