import { randomUUID } from 'node:crypto';
import { cropPurchase, herdBody, plotBody } from '../../services/policy/test/support';

/**
 * Every partner route that refers to another resource by id (in its path or body), and how to
 * call it with some organization's ids: the cross-organization tests (by key and by dashboard
 * token) send these with another organization's ids and with ids nobody has.
 */

export type Ids = Record<
  | 'farmerId'
  | 'plotId'
  | 'herdId'
  | 'policyId'
  | 'deliveryId'
  | 'determinationId'
  | 'paymentId'
  | 'quoteId'
  | 'payoutId'
  | 'userId',
  string
>;

/** How to call a route with `ids`; `ownFarmerId` is the caller's own farmer where one is needed. */
export type IdProbe = (ids: Ids, ownFarmerId: string) => { path: string; body?: unknown };

/** One entry per partner route that refers to a resource by id (path or body). */
export const ID_PROBES: Record<string, IdProbe> = {
  getFarmer: (ids) => ({ path: `/farmers/${ids.farmerId}` }),
  listFarmerPlots: (ids) => ({ path: `/farmers/${ids.farmerId}/plots` }),
  listFarmerHerds: (ids) => ({ path: `/farmers/${ids.farmerId}/herds` }),
  getPlot: (ids) => ({ path: `/plots/${ids.plotId}` }),
  getHerd: (ids) => ({ path: `/herds/${ids.herdId}` }),
  getPolicy: (ids) => ({ path: `/policies/${ids.policyId}` }),
  getPolicyStatus: (ids) => ({ path: `/policies/${ids.policyId}/status` }),
  activatePolicy: (ids) => ({ path: `/policies/${ids.policyId}/activate`, body: {} }),
  getWebhookDelivery: (ids) => ({ path: `/organizations/me/webhook/deliveries/${ids.deliveryId}` }),
  retryWebhookDelivery: (ids) => ({ path: `/organizations/me/webhook/deliveries/${ids.deliveryId}/retry` }),
  getPayment: (ids) => ({ path: `/payments/${ids.paymentId}` }),
  getQuote: (ids) => ({ path: `/payments/quotes/${ids.quoteId}` }),
  getPayout: (ids) => ({ path: `/payouts/${ids.payoutId}` }),
  retryPayout: (ids) => ({ path: `/payouts/${ids.payoutId}/retry` }),
  getUser: (ids) => ({ path: `/organizations/me/users/${ids.userId}` }),
  updateUser: (ids) => ({ path: `/organizations/me/users/${ids.userId}`, body: { role: 'ORG_ADMIN' } }),
  deactivateUser: (ids) => ({ path: `/organizations/me/users/${ids.userId}` }),
  reissueInvitation: (ids) => ({ path: `/organizations/me/users/${ids.userId}/invitation` }),
  getDetermination: (ids) => ({ path: `/determinations/${ids.determinationId}` }),
  getDeterminationEvidence: (ids) => ({ path: `/determinations/${ids.determinationId}/evidence` }),
  getSettlementReports: (ids) => ({ path: `/determinations/${ids.determinationId}/settlement-report` }),
  recordSettlementReport: (ids) => ({
    path: `/determinations/${ids.determinationId}/settlement-report`,
    body: {
      partnerReference: 'PROBE-1',
      outcome: 'NOT_SETTLED',
      method: 'OTHER',
      settledAmountMinor: '0',
      settlementCurrency: 'KES',
      settledAt: '2026-01-01T00:00:00Z',
    },
  }),
  registerPlot: (ids) => ({ path: '/plots', body: plotBody(ids.farmerId) }),
  registerHerd: (ids) => ({ path: '/herds', body: herdBody(ids.farmerId) }),
  // The caller's own farmer with the other organization's plot, so the plot is what is probed.
  purchasePolicy: (ids, ownFarmerId) => ({
    path: '/policies/purchase',
    body: cropPurchase({ farmerId: ownFarmerId, plotId: ids.plotId }),
  }),
};

/** Body fields that name another resource (the path ids are found from the contract). */
export const BODY_REFERENCES = new Set(['registerPlot', 'registerHerd', 'purchasePolicy']);

/** Ids that exist nowhere. */
export const unknownIds = (): Ids => ({
  farmerId: randomUUID(),
  plotId: randomUUID(),
  herdId: randomUUID(),
  policyId: randomUUID(),
  deliveryId: randomUUID(),
  determinationId: randomUUID(),
  paymentId: randomUUID(),
  quoteId: randomUUID(),
  payoutId: randomUUID(),
  userId: randomUUID(),
});
