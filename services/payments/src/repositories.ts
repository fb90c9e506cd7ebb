import { acrossOrganizations, scopedTo } from '@parametric/mongo';
import type { Connection } from 'mongoose';
import { callbackModel } from './callbacks/model';
import { payoutAttemptModel, payoutModel, sweepStateModel } from './payouts/model';
import { tenantLedgerOf, tenantPayoutStoreOf } from './payouts/store';
import { transactionModel } from './premiums/model';
import { quotesOf } from './quotes/domain';
import { quoteModel } from './quotes/model';
import { rateReferenceModel } from './quotes/reference';

/** The models `repositories` uses (its `migrate` command creates their indexes). */
function paymentModelsOn(connection: Connection) {
  return {
    transactions: transactionModel(connection),
    callbacks: callbackModel(connection),
    quotes: quoteModel(connection),
    payouts: payoutModel(connection),
    payoutAttempts: payoutAttemptModel(connection),
    payoutSweepState: sweepStateModel(connection),
  };
}

/** Every model of the service: the repositories' and the quotes' rate reference (quotes/reference.ts). */
export const paymentModels = (connection: Connection) => [
  ...Object.values(paymentModelsOn(connection)),
  rateReferenceModel(connection),
];

/**
 * The payments service's data: bound to one organization (partner requests), or across
 * organizations (provider callbacks find their transaction by the provider's id; the sweeps;
 * the outbox relays).
 */
export function paymentRepositories(connection: Connection) {
  const models = paymentModelsOn(connection);
  return {
    init: () => Promise.all(Object.values(models).map((model) => model.init())),
    forOrganization: (organizationId: string) => {
      const payouts = scopedTo(models.payouts, organizationId);
      const payoutAttempts = scopedTo(models.payoutAttempts, organizationId);
      return {
        organizationId,
        transactions: scopedTo(models.transactions, organizationId),
        payouts,
        payoutAttempts,
        payoutStore: tenantPayoutStoreOf(payouts),
        payoutLedger: tenantLedgerOf(payoutAttempts),
        ...quotesOf(models.quotes, organizationId),
      };
    },
    acrossOrganizations: () => ({
      transactions: acrossOrganizations(models.transactions),
      callbacks: acrossOrganizations(models.callbacks),
      payouts: acrossOrganizations(models.payouts),
      payoutAttempts: acrossOrganizations(models.payoutAttempts),
      payoutSweepState: acrossOrganizations(models.payoutSweepState),
      quotes: acrossOrganizations(models.quotes),
    }),
  };
}

export type PaymentRepositories = ReturnType<typeof paymentRepositories>;
export type TenantPayments = ReturnType<PaymentRepositories['forOrganization']>;
export type AllPayments = ReturnType<PaymentRepositories['acrossOrganizations']>;
