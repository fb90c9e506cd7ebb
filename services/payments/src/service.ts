import { OPS_ROUTES, PARTNER_ROUTES } from '@parametric/contracts';
import { determinationLookup, payableDeterminations } from '@parametric/determinations-client';
import { startOutboxRelay } from '@parametric/events';
import {
  answerOptions,
  createApp,
  finishApp,
  healthRoutes,
  listen,
  metricsRoutes,
  mountRoutes,
  organizationOf,
  requireInternalContext,
  requireOpsContext,
} from '@parametric/http';
import type { Logger } from '@parametric/logger';
import { createMetrics } from '@parametric/metrics';
import { connectMongo, pingMongo } from '@parametric/mongo';
import { farmerLookup, policyLookup } from '@parametric/policy-client';
import {
  createProducer,
  createQueueStats,
  type QueueName,
  type QueueWorker,
  startJobOutboxRelay,
} from '@parametric/queue';
import { type Express, Router } from 'express';
import { callbackRoutes } from './callbacks/routes';
import { type Clock, systemClock } from './clock';
import type { PaymentsConfig } from './config';
import type { PartnerContext } from './context';
import { paymentMetrics, payoutStatesOf } from './metrics';
import type { PayoutSettings } from './payouts/attempt';
import type { OriginateDeps } from './payouts/originate';
import {
  type PayoutOpsContext,
  type PayoutPartnerContext,
  payoutOpsRoutes,
  payoutRoutes,
} from './payouts/routes';
import { payoutLedgerOf, payoutStoreOf } from './payouts/store';
import { sweepStateOf } from './payouts/sweep';
import { startAttemptWorker, startOriginationWorker } from './payouts/workers';
import { matchEarlyCallbacks } from './premiums/confirmation';
import { premiumRoutes } from './premiums/routes';
import { createDaraja, parseStkCallback } from './provider';
import { rateSourceFrom } from './quotes/config';
import { createQuote, quotesOf } from './quotes/domain';
import { type QuoteContext, quoteRoutes } from './quotes/routes';
import { paymentRepositories } from './repositories';
import { startPaymentSweeps } from './sweeps';

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
 * provider's callbacks on their own listener, the reconciliation sweep, and KES→USDC quotes.
 */
export async function startPayments(
  config: PaymentsConfig,
  logger: Logger,
  clock: Clock = systemClock,
): Promise<RunningPayments> {
  const connection = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  const repositories = paymentRepositories(connection);
  await repositories.init();
  // Callbacks find their transaction by the provider's id; the sweep and relay serve everyone.
  const data = repositories.acrossOrganizations();

  const queueOptions = {
    connection: config.REDIS_URL,
    prefix: config.REDIS_PREFIX,
    onError: (err: Error) => logger.warn({ err: err.message }, 'queue producer: Redis error'),
  };
  // `GET /metrics` on this internal port, unauthenticated like `/readyz` (docs/ops.md, Metrics):
  // the HTTP histogram, the queues this service produces to or consumes from, node's metrics,
  // and the domain metrics (outboxes, breakers, premiums, payouts), all registered now.
  const metrics = createMetrics('payments');
  metrics.observeOutboxes([data.transactions, data.payouts]);
  const counted = paymentMetrics(metrics);
  const onPremium = counted.premium;
  const activations = createProducer('policy-activations', queueOptions);
  const sweeps = createProducer('payment-sweeps', queueOptions);
  const jobRelay = startJobOutboxRelay({
    model: data.transactions,
    producers: { 'policy-activations': activations },
    intervalMs: config.OUTBOX_POLL_MS,
    logger,
  });
  // Payouts: their events to the webhooks service, their attempts and summaries to their queues.
  const events = createProducer('events', queueOptions);
  const attempts = createProducer('payout-attempts', queueOptions);
  const summaries = createProducer('policy-summaries', queueOptions);
  const payoutEventRelay = startOutboxRelay({
    model: data.payouts,
    producer: metrics.relayLag(data.payouts.collection.collectionName, events),
    intervalMs: config.OUTBOX_POLL_MS,
    logger,
  });
  const payoutJobRelay = startJobOutboxRelay({
    model: data.payouts,
    producers: { 'payout-attempts': attempts, 'policy-summaries': summaries },
    intervalMs: config.OUTBOX_POLL_MS,
    logger,
  });
  const onPayoutChanged = () => {
    payoutEventRelay.kick();
    payoutJobRelay.kick();
  };
  // Whatever a previous run recorded but did not send goes out now.
  jobRelay.kick();
  onPayoutChanged();

  const provider = createDaraja({
    baseUrl: config.MPESA_BASE_URL,
    consumerKey: config.MPESA_CONSUMER_KEY,
    consumerSecret: config.MPESA_CONSUMER_SECRET,
    shortcode: config.MPESA_SHORTCODE,
    passkey: config.MPESA_PASSKEY,
    b2cShortcode: config.MPESA_B2C_SHORTCODE,
    initiatorName: config.MPESA_INITIATOR_NAME,
    securityCredential: config.MPESA_SECURITY_CREDENTIAL,
    timestampZone: config.MPESA_TIMESTAMP_ZONE,
    timeoutMs: config.MPESA_TIMEOUT_MS,
    breakerResetMs: config.MPESA_BREAKER_RESET_MS,
    onBreaker: (breaker) => metrics.observeBreaker('mpesa', breaker),
  });
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
  const stkCallbackUrl = `${callbackBase}/stk`;
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
    now: clock,
    onPayout: counted.payout,
  };
  const confirm = { data, provider, confirmWithQuery: config.PAYMENTS_CONFIRM_WITH_QUERY, onPremium };
  const afterPrompt = async (checkoutRequestId: string) => {
    const outcomes = await matchEarlyCallbacks(checkoutRequestId, {
      ...confirm,
      parseStk: parseStkCallback,
      now: clock(),
    });
    if (outcomes.some((o) => o === 'SUCCEEDED' || o === 'FAILED')) jobRelay.kick();
  };

  const workers: QueueWorker<QueueName>[] = [];
  if (config.RUN_WORKERS) {
    const redis = { connection: config.REDIS_URL, prefix: config.REDIS_PREFIX, logger };
    workers.push(
      startOriginationWorker({
        ...redis,
        deps: originate,
        retryBudgetMs: config.PAYOUT_ORIGINATION_RETRY_HOURS * 3_600_000,
        onChanged: onPayoutChanged,
      }) as unknown as QueueWorker<QueueName>,
      startAttemptWorker({
        ...redis,
        deps: {
          store: payoutStore,
          ledger: payoutLedger,
          provider,
          settings: payoutSettings,
          now: clock,
          logger,
        },
        concurrency: config.PAYOUT_CONCURRENCY,
        maxPerSecond: config.MPESA_B2C_MAX_PER_SECOND,
        onChanged: onPayoutChanged,
      }) as unknown as QueueWorker<QueueName>,
    );
    workers.push(
      (await startPaymentSweeps({
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
        sweeps,
        connection: config.REDIS_URL,
        prefix: config.REDIS_PREFIX,
        logger,
        clock,
        onChanged: () => {
          jobRelay.kick();
          onPayoutChanged();
        },
      })) as unknown as QueueWorker<QueueName>,
    );
  }

  const queueStats = createQueueStats(
    [
      'events',
      'policy-activations',
      'policy-summaries',
      'payment-sweeps',
      'payout-originations',
      'payout-attempts',
    ],
    {
      connection: config.REDIS_URL,
      prefix: config.REDIS_PREFIX,
    },
  );
  metrics.observeQueues(queueStats);
  const app = createApp(logger, { deadlineMs: config.REQUEST_DEADLINE_MS, metrics: metrics.http });
  app.use(healthRoutes({ mongo: () => pingMongo(connection) }));
  app.use(metricsRoutes(metrics.handler));
  app.use(
    '/api',
    requireInternalContext(config.INTERNAL_SIGNING_SECRET),
    answerOptions(PARTNER_ROUTES.payments),
    mountRoutes<PartnerContext>(Router(), premiumRoutes, (req) => ({
      tenant: repositories.forOrganization(organizationOf(req)),
      market: req.context?.organization?.countryCode ?? '',
      findPolicy,
      provider,
      stkCallbackUrl,
      afterPrompt,
      now: clock,
      onPremium,
    })),
    mountRoutes<QuoteContext>(Router(), quoteRoutes({ ttlSeconds: config.QUOTE_TTL_SECONDS }), (req) => ({
      tenant: repositories.forOrganization(organizationOf(req)),
      rates,
      now: clock,
    })),
    mountRoutes<PayoutPartnerContext>(Router(), payoutRoutes, (req) => {
      const tenant = repositories.forOrganization(organizationOf(req));
      return {
        payouts: tenant.payouts,
        attempts: tenant.payoutAttempts,
        findPolicy,
        maxAttempts: config.PAYOUT_MAX_ATTEMPTS,
        now: clock,
        onChanged: onPayoutChanged,
      };
    }),
  );
  const opsContext: PayoutOpsContext = { originate, onChanged: onPayoutChanged };
  app.use(
    '/ops',
    requireOpsContext(config.INTERNAL_SIGNING_SECRET),
    answerOptions(OPS_ROUTES.payments),
    mountRoutes(Router(), payoutOpsRoutes, () => opsContext),
  );
  finishApp(app, logger);

  // Measured too (route templates name the token `:token`), but `/metrics` is not served on this
  // port: the provider reaches it from outside the cluster.
  const callbackApp = createApp(logger, {
    deadlineMs: config.REQUEST_DEADLINE_MS,
    metrics: metrics.http,
    // The callback URLs carry a secret path token (Daraja cannot send headers of ours).
    loggedPath: (path) => path.replace(/^\/mpesa\/[^/]+/i, '/mpesa/[Redacted]'),
  });
  callbackApp.use(healthRoutes({ mongo: () => pingMongo(connection) }));
  callbackApp.use(
    callbackRoutes({
      data,
      token: config.PAYMENTS_CALLBACK_TOKEN,
      confirm: { provider, confirmWithQuery: config.PAYMENTS_CONFIRM_WITH_QUERY, onPremium },
      parseStk: parseStkCallback,
      now: clock,
      logger,
      onResolved: () => jobRelay.kick(),
      payouts: { store: payoutStore, ledger: payoutLedger, settings: payoutSettings },
      onPayoutChanged,
    }),
  );
  finishApp(callbackApp, logger);

  const [http, callbackHttp] = await Promise.all([
    listen(app, config.PAYMENTS_PORT, config.PAYMENTS_HOST),
    listen(callbackApp, config.PAYMENTS_CALLBACK_PORT, config.PAYMENTS_CALLBACK_HOST),
  ]);

  let stopped: Promise<void> | undefined;
  return {
    url: http.url,
    callbackUrl: callbackHttp.url,
    app,
    callbackApp,
    drainOutbox: async () => {
      await Promise.all([jobRelay.drain(), payoutEventRelay.drain(), payoutJobRelay.drain()]);
    },
    stop: () => {
      stopped ??= (async () => {
        await Promise.all([http.close(), callbackHttp.close()]);
        await queueStats.close();
        await Promise.all(workers.map((w) => w.close()));
        await Promise.all([jobRelay.stop(), payoutEventRelay.stop(), payoutJobRelay.stop()]);
        await Promise.all([
          activations.close(),
          sweeps.close(),
          events.close(),
          attempts.close(),
          summaries.close(),
        ]);
        await Promise.all([provider.close(), rates.close()]);
        await connection.close();
      })();
      return stopped;
    },
  };
}
