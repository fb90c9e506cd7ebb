import { createLogger } from '@parametric/logger';
import { parseExposition, type Sample } from '@parametric/metrics';
import { uniqueRedisPrefix } from '@parametric/test-harness';
import { type RunningDeterminations, startDeterminations } from '../../services/determinations/src/service';
import { determinationsTestConfig } from '../../services/determinations/test/support';
import { type PaymentsStack, startPaymentsStack } from '../../services/payments/test/support';
import { type RunningWebhooks, startWebhooks } from '../../services/webhooks/src/service';
import { webhooksTestConfig } from '../../services/webhooks/test/support';

/**
 * Each internal service serves its metrics on its own port as it serves `/readyz`: no signed
 * context (an in-cluster Prometheus cannot sign one), while its `/api` still requires one. The
 * gateway and policy service are scraped in services/gateway/test/metrics.test.ts.
 */

const logger = createLogger({ name: 'metrics-endpoints', level: 'silent' });
let webhooks: RunningWebhooks;
let determinations: RunningDeterminations;
let payments: PaymentsStack;

beforeAll(async () => {
  webhooks = await startWebhooks(webhooksTestConfig({ RUN_WORKERS: 'false' }), logger);
  determinations = await startDeterminations(determinationsTestConfig({ RUN_WORKERS: 'false' }), logger);
  payments = await startPaymentsStack(
    { policyUrl: 'http://127.0.0.1:9', redisPrefix: uniqueRedisPrefix('payments') },
    { RUN_WORKERS: 'false' },
  );
});

afterAll(async () => {
  await Promise.all([webhooks?.stop(), determinations?.stop(), payments?.stop()]);
});

async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

it.each([
  ['webhooks', () => webhooks.url, ['events', 'webhook-deliveries']],
  ['determinations', () => determinations.url, ['determination-ingest', 'payout-originations']],
  ['payments', () => payments.payments.url, ['payout-originations', 'payout-attempts']],
])('%s serves /metrics without a signed context, with its queues', async (service, urlOf, queues) => {
  const url = urlOf();
  // Its API still refuses a caller without the gateway's signed context.
  expect((await fetch(`${url}/api/nothing`)).status).toBe(401);
  const samples = await scrape(url);
  for (const sample of samples) expect(sample.labels.service).toBe(service);
  for (const queue of queues) {
    expect(
      samples.some(
        (s) => s.name === 'queue_jobs' && s.labels.queue === queue && s.labels.state === 'waiting',
      ),
    ).toBe(true);
  }
  // The refused request above, by its (unmatched) route.
  expect(
    samples.some(
      (s) =>
        s.name === 'http_request_duration_seconds_count' &&
        s.labels.route === 'unmatched' &&
        s.labels.status === '401',
    ),
  ).toBe(true);
});

/** Metric names as `# TYPE` lines declare them: present once registered, observed or not. */
async function declaredNames(url: string): Promise<Set<string>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return new Set([...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1] as string));
}

// The domain metrics alerts and dashboards are written against (docs/ops.md): registered at
// start, before anything moved them. Gateway and policy: services/gateway/test/metrics.test.ts.
it.each([
  ['webhooks', () => webhooks.url, ['webhook_deliveries_total', 'webhook_delivery_latency_seconds']],
  [
    'determinations',
    () => determinations.url,
    [
      'outbox_pending_documents',
      'outbox_relay_lag_seconds',
      'determinations_issued_total',
      'determinations_unattributed_total',
      'settlement_reports_recorded_total',
      'settlement_reports_overdue',
    ],
  ],
  [
    'payments',
    () => payments.payments.url,
    [
      'outbox_pending_documents',
      'outbox_relay_lag_seconds',
      'circuit_breaker_state',
      'circuit_breaker_transitions_total',
      'premium_collections_total',
      'payouts_total',
    ],
  ],
])('%s declares its domain metrics from the start', async (_service, urlOf, names) => {
  const declared = await declaredNames(urlOf());
  for (const name of names) expect([name, declared.has(name)]).toEqual([name, true]);
});

it('the payments callback port, which the provider reaches from outside, serves no metrics', async () => {
  expect((await fetch(`${payments.payments.callbackUrl}/metrics`)).status).toBe(404);
});
