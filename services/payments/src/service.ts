import { determinationLookup, payableDeterminations } from '@parametric/determinations-client';
import type { Logger } from '@parametric/logger';
import { farmerLookup, policyLookup } from '@parametric/policy-client';
import { type ServiceDeclaration, startService } from '@parametric/runtime';
import type { Express } from 'express';
import { callbackRoutes } from './callbacks/routes';
import { type Clock, systemClock } from './clock';
import { type DarajaSettings, liveDaraja, type PaymentsConfig, sandboxDaraja } from './config';
import type { PartnerContext } from './context';
import { paymentMetrics, payoutStatesOf } from './metrics';
import type { PayoutProvider, PayoutSettings } from './payouts/attempt';
import type { OriginateDeps } from './payouts/originate';
import { type PayoutOpsContext, payoutOpsRoutes, payoutRoutes } from './payouts/routes';
import { payoutLedgerOf, payoutStoreOf } from './payouts/store';
import { sweepStateOf } from './payouts/sweep';
import { startAttemptWorker, startOriginationWorker } from './payouts/workers';
import { matchEarlyCallbacks } from './premiums/confirmation';
import type { PremiumProvider } from './premiums/provider';
import { premiumRoutes } from './premiums/routes';
import { createDaraja, parseStkCallback } from './provider';
import { rateSourceFrom } from './quotes/config';
import { createQuote, quotesOf } from './quotes/domain';
import { quoteRoutes } from './quotes/routes';
import { type PaymentRepositories, paymentModels, paymentRepositories } from './repositories';
import type { ByEnvironment } from './sandbox';
import { paymentSweeps } from './sweeps';

export interface RunningPayments {
  url: string;
  /** The provider callback listener (Daraja's CallBackURL / ResultURL point here). */
  callbackUrl: string;
  app: Express;
  callbackApp: Express;
  /** Moves recorded jobs to their queues now and waits (tests, shutdown). */
  drainOutbox(): Promise<void>;
  /** Graceful shutdown: both HTTP servers, then workers, relays and producers, the provider client, MongoDB. */
  stop(): Promise<void>;
}

/**
 * The payments service behind the gateway: Tier 2 premium collection by M-Pesa STK push, the
 * provider's callbacks on their own listener, the reconciliation sweep, KES→USDC quotes, and
 * Tier 2 payouts by B2C.
 */
export function paymentsService(
  clock: Clock,
): ServiceDeclaration<
  PaymentsConfig,
  PaymentRepositories,
  'events' | 'policy-activations' | 'payment-sweeps' | 'payout-attempts' | 'policy-summaries',
  object,
  PartnerContext,
  PayoutOpsContext
> {
  return {
    name: 'payments',
    repositories: paymentRepositories,
    models: paymentModels,
    produces: ['events', 'policy-activations', 'payment-sweeps', 'payout-attempts', 'policy-summaries'],
    queueStats: [
      'events',
      'policy-activations',
      'policy-summaries',
      'payment-sweeps',
      'payout-originations',
      'payout-attempts',
    ],
    build({ config, logger, connection, repositories, metrics, queue, sweeps }) {
      // Callbacks find their transaction by the provider's id; the sweeps and relays serve everyone.
      const data = repositories.acrossOrganizations();
      const counted = paymentMetrics(metrics);
      const onPremium = counted.premium;
      const daraja = (settings: DarajaSettings, observed: boolean) =>
        createDaraja({
          ...settings,
          timestampZone: config.MPESA_TIMESTAMP_ZONE,
          timeoutMs: config.MPESA_TIMEOUT_MS,
          breakerResetMs: config.MPESA_BREAKER_RESET_MS,
          ...(observed ? { onBreaker: (breaker) => metrics.observeBreaker('mpesa', breaker) } : {}),
        });
      const provider = daraja(liveDaraja(config), true);
      const sandboxSettings = sandboxDaraja(config);
      // A sandbox Daraja of its own is not reported as `mpesa`: its outages page no one.
      const sandboxProvider =
        sandboxSettings === 'same' ? provider : sandboxSettings && daraja(sandboxSettings, false);
      // Premiums (prompts, confirmations) and payouts (B2C, Transaction Status) go through their
      // environment's Daraja.
      const providers: ByEnvironment<PremiumProvider & PayoutProvider> = {
        live: provider,
        ...(sandboxProvider ? { sandbox: sandboxProvider } : {}),
      };
      const findPolicy = policyLookup({
        policyUrl: config.POLICY_URL,
        signingSecret: config.INTERNAL_SIGNING_SECRET,
        timeoutMs: config.POLICY_TIMEOUT_MS,
      });
      const rates = rateSourceFrom(config, {
        connection,
        logger,
        now: clock,
        onBreaker: (breaker) => metrics.observeBreaker('rate_source', breaker),
        onRefused: counted.rateRefused,
      });
      const callbackBase = `${config.PAYMENTS_CALLBACK_BASE_URL}/mpesa/${config.PAYMENTS_CALLBACK_TOKEN}`;
      const payoutSettings: PayoutSettings = {
        resultUrl: `${callbackBase}/b2c/result`,
        queueTimeoutUrl: `${callbackBase}/b2c/timeout`,
        statusResultUrl: `${callbackBase}/status/result`,
        statusTimeoutUrl: `${callbackBase}/status/timeout`,
        retryBaseMs: Math.round(config.PAYOUT_RETRY_BASE_SECONDS * 1000),
        maxAttempts: config.PAYOUT_MAX_ATTEMPTS,
        statusPollMs: config.PAYOUT_STATUS_POLL_MS,
        statusAnswerWaitMs: config.PAYOUT_STATUS_ANSWER_WAIT_SECONDS * 1000,
        transportRetryMs: 1_000,
        resultWaitMs: config.PAYOUT_RESULT_WAIT_SECONDS * 1000,
      };
      const payoutStore = payoutStoreOf(data.payouts, (before, after) => {
        for (const state of payoutStatesOf(before, after)) counted.payout(state);
      });
      const payoutLedger = payoutLedgerOf(data.payoutAttempts);
      const determinationsClient = {
        determinationsUrl: config.DETERMINATIONS_URL,
        signingSecret: config.INTERNAL_SIGNING_SECRET,
        timeoutMs: config.DETERMINATIONS_TIMEOUT_MS,
      };
      const originate: OriginateDeps = {
        store: payoutStore,
        quote: (organizationId, amountKes) =>
          createQuote(
            quotesOf(data.quotes, organizationId),
            { amount: amountKes, fromCurrency: 'KES', toCurrency: 'USDC' },
            { rates, now: clock, ttlSeconds: config.QUOTE_TTL_SECONDS },
          ),
        findDetermination: determinationLookup(determinationsClient),
        findPolicy,
        findFarmer: farmerLookup({
          policyUrl: config.POLICY_URL,
          signingSecret: config.INTERNAL_SIGNING_SECRET,
          timeoutMs: config.POLICY_TIMEOUT_MS,
        }),
        maxAttempts: config.PAYOUT_MAX_ATTEMPTS,
        limits: { minAmount: config.MPESA_B2C_MIN_AMOUNT, maxAmount: config.MPESA_B2C_MAX_AMOUNT },
        sandboxDaraja: sandboxProvider !== undefined,
        now: clock,
        onPayout: counted.payout,
      };
      const confirm = {
        data,
        providers: providers,
        confirmWithQuery: config.PAYMENTS_CONFIRM_WITH_QUERY,
        onPremium,
      };
      const workerBase = { ...queue, logger };

      return {
        relays: [
          { jobs: data.transactions, to: ['policy-activations'] },
          // Payouts: their events to the webhooks service, their attempts and summaries to their queues.
          { events: data.payouts },
          { jobs: data.payouts, to: ['payout-attempts', 'policy-summaries'] },
        ],
        api: {
          port: config.PAYMENTS_PORT,
          host: config.PAYMENTS_HOST,
          partner: {
            routes: [
              ...premiumRoutes({
                findPolicy,
                providers: providers,
                stkCallbackUrl: `${callbackBase}/stk`,
                // Takes up callbacks that arrived before the prompt's id was stored.
                takeUpEarlyCallbacks: async (checkoutRequestId) => {
                  await matchEarlyCallbacks(checkoutRequestId, {
                    ...confirm,
                    parseStk: parseStkCallback,
                    now: clock(),
                  });
                },
                now: clock,
                onPremium,
              }),
              ...quoteRoutes({ ttlSeconds: config.QUOTE_TTL_SECONDS, rates, now: clock }),
              ...payoutRoutes({ findPolicy, maxAttempts: config.PAYOUT_MAX_ATTEMPTS, now: clock }),
            ],
            context: (caller) => ({
              tenant: repositories.forOrganization(caller.organizationId),
              market: caller.organization?.countryCode ?? '',
              environment: caller.organization?.environment ?? 'live',
            }),
          },
          ops: { routes: payoutOpsRoutes, context: { originate } },
        },
        listeners: [
          {
            // Measured too (route templates name the token `:token`), but `/metrics` is not served
            // on this port: the provider reaches it from outside the cluster.
            name: 'callbacks',
            port: config.PAYMENTS_CALLBACK_PORT,
            host: config.PAYMENTS_CALLBACK_HOST,
            // The callback URLs carry a secret path token (Daraja cannot send headers of ours).
            app: { loggedPath: (path) => path.replace(/^\/mpesa\/[^/]+/i, '/mpesa/[Redacted]') },
            mount: (app) => {
              app.use(
                callbackRoutes({
                  data,
                  token: config.PAYMENTS_CALLBACK_TOKEN,
                  confirm: {
                    providers: providers,
                    confirmWithQuery: config.PAYMENTS_CONFIRM_WITH_QUERY,
                    onPremium,
                  },
                  parseStk: parseStkCallback,
                  now: clock,
                  logger,
                  payouts: { store: payoutStore, ledger: payoutLedger, settings: payoutSettings },
                }),
              );
            },
          },
        ],
        workers: () => [
          startOriginationWorker({
            ...workerBase,
            deps: originate,
            retryBudgetMs: config.PAYOUT_ORIGINATION_RETRY_HOURS * 3_600_000,
          }),
          startAttemptWorker({
            ...workerBase,
            deps: {
              store: payoutStore,
              ledger: payoutLedger,
              providers,
              settings: payoutSettings,
              now: clock,
              logger,
            },
            concurrency: config.PAYOUT_CONCURRENCY,
            maxPerSecond: config.MPESA_B2C_MAX_PER_SECOND,
          }),
        ],
        sweeps: sweeps(
          'payment-sweeps',
          paymentSweeps({
            confirm,
            reconcileAfterSeconds: config.PAYMENTS_RECONCILE_AFTER_SECONDS,
            reconcileEveryMs: config.PAYMENTS_RECONCILE_SWEEP_SECONDS * 1000,
            originations: {
              originate,
              payable: payableDeterminations(determinationsClient),
              state: sweepStateOf(data.payoutSweepState),
              settleMs: config.PAYOUT_ORIGINATION_SETTLE_SECONDS * 1000,
              pageSize: 200,
              logger,
            },
            originateEveryMs: config.PAYOUT_ORIGINATION_SWEEP_SECONDS * 1000,
            logger,
            clock,
          }),
        ),
        close: [
          provider,
          ...(sandboxProvider && sandboxProvider !== provider ? [sandboxProvider] : []),
          rates,
        ],
      };
    },
  };
}

export async function startPayments(
  config: PaymentsConfig,
  logger: Logger,
  clock: Clock = systemClock,
): Promise<RunningPayments> {
  const service = await startService(paymentsService(clock), config, logger);
  const api = service.listener('api');
  const callbacks = service.listener('callbacks');
  return {
    url: api.url,
    callbackUrl: callbacks.url,
    app: api.app,
    callbackApp: callbacks.app,
    drainOutbox: service.drainOutbox,
    stop: service.stop,
  };
}
