/**
 * Every metric name the alerts (k8s/observability/prometheus-rule.yaml) and the Grafana
 * dashboard (k8s/observability/dashboards/platform.json) query is one the services export: the
 * five services are started in-process (as services/gateway/test/metrics.test.ts and
 * test/contract/metrics-endpoints.test.ts do), each is scraped where its ServiceMonitor scrapes
 * it (the gateway's /ops/metrics with the ops token, the others' /metrics), and the names
 * declared by the scrapes' `# TYPE` lines are compared with those parsed out of every
 * expression. A name no service exports would be an alert that never fires, or an empty panel.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createLogger } from '@parametric/logger';
import { uniqueRedisPrefix } from '@parametric/test-harness';
import { type RunningDeterminations, startDeterminations } from '../../services/determinations/src/service';
import { determinationsTestConfig } from '../../services/determinations/test/support';
import { OPS_TOKEN } from '../../services/gateway/test/support';
import { type PaymentsStack, startPaymentsStack } from '../../services/payments/test/support';
import { type PolicyPlatform, startPolicyPlatform } from '../../services/policy/test/support';
import { type RunningWebhooks, startWebhooks } from '../../services/webhooks/src/service';
import { webhooksTestConfig } from '../../services/webhooks/test/support';
import { exportedNames, metricNames } from './promql';
import { isObj, type Obj, parseYaml, repoRoot } from './support';

/** Series Prometheus records itself for every target, not exported by any service. */
const PROMETHEUS_OWN = ['up'];

/** Every PromQL expression of the component, with where it is. */
function expressions(): { where: string; expr: string }[] {
  const dir = path.join(repoRoot, 'k8s/observability');
  const rule = parseYaml(readFileSync(path.join(dir, 'prometheus-rule.yaml'), 'utf8'), 'rule', '1.1') as Obj;
  const out: { where: string; expr: string }[] = [];
  for (const group of ((rule.spec as Obj).groups as Obj[]) ?? []) {
    for (const r of group.rules as Obj[])
      out.push({ where: `alert ${String(r.alert)}`, expr: String(r.expr) });
  }
  const dashboard = JSON.parse(readFileSync(path.join(dir, 'dashboards/platform.json'), 'utf8')) as Obj;
  for (const panel of dashboard.panels as Obj[]) {
    for (const target of (panel.targets as Obj[] | undefined) ?? [])
      out.push({ where: `panel "${String(panel.title)}"`, expr: String(target.expr) });
  }
  // Template variables: Grafana's label_values(<metric>, <label>).
  for (const v of (dashboard.templating as { list: Obj[] }).list) {
    const query = isObj(v.query) ? v.query.query : v.query;
    const metric = /^label_values\((\w+)\s*,/.exec(String(query))?.[1];
    if (metric) out.push({ where: `variable $${String(v.name)}`, expr: metric });
  }
  return out;
}

/** Referenced name → where it is used. */
function referenced(): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const { where, expr } of expressions()) {
    for (const name of metricNames(expr)) names.set(name, [...new Set([...(names.get(name) ?? []), where])]);
  }
  return names;
}

const logger = createLogger({ name: 'metrics-names', level: 'silent' });
let platform: PolicyPlatform;
let webhooks: RunningWebhooks;
let determinations: RunningDeterminations;
let payments: PaymentsStack;
const exported = new Map<string, string[]>();

async function scrape(service: string, url: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(url, { headers });
  if (res.status !== 200) throw new Error(`${service}: GET ${url} answered ${res.status}`);
  for (const name of exportedNames(await res.text()))
    exported.set(name, [...(exported.get(name) ?? []), service]);
}

beforeAll(async () => {
  platform = await startPolicyPlatform();
  webhooks = await startWebhooks(webhooksTestConfig(), logger);
  determinations = await startDeterminations(determinationsTestConfig(), logger);
  payments = await startPaymentsStack({
    policyUrl: platform.policy.url,
    redisPrefix: uniqueRedisPrefix('payments'),
  });
  await scrape('gateway', `${platform.gateway.gateway.opsUrl}/metrics`, {
    authorization: `Bearer ${OPS_TOKEN}`,
  });
  await scrape('policy', `${platform.policy.url}/metrics`);
  await scrape('webhooks', `${webhooks.url}/metrics`);
  await scrape('determinations', `${determinations.url}/metrics`);
  await scrape('payments', `${payments.payments.url}/metrics`);
}, 120_000);

afterAll(async () => {
  await Promise.all([webhooks?.stop(), determinations?.stop(), payments?.stop()]);
  await platform?.stop();
});

function missing(): string[] {
  return [...referenced().keys()].filter((n) => !PROMETHEUS_OWN.includes(n) && !exported.has(n)).sort();
}

test('the expressions reference the platform’s metrics (the parse finds them)', () => {
  const names = [...referenced().keys()];
  expect(names).toEqual(
    expect.arrayContaining([
      'up',
      'http_request_duration_seconds_count',
      'http_request_duration_seconds_bucket',
      'queue_jobs',
      'queue_oldest_waiting_age_seconds',
      'queue_jobs_processed_total',
      'rate_limit_rejections_total',
      'auth_failures_total',
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ]),
  );
  // Names only: no function, keyword or label name taken for a metric.
  for (const n of names)
    expect(n).toMatch(/_(total|seconds|bytes|bucket|count|sum|jobs|documents|state|overdue)$|^up$/);
});

test('every metric name an alert or the dashboard references is exported by some service', () => {
  const absent = missing();
  if (absent.length > 0) {
    const uses = referenced();
    // The point of this test is to say which names.
    console.log(
      `Metric names referenced by alerts or the dashboard that no service exports yet (${absent.length}):\n${absent
        .map((n) => `  ${n}  (${(uses.get(n) ?? []).join('; ')})`)
        .join('\n')}`,
    );
  }
  expect(absent).toEqual([]);
});
