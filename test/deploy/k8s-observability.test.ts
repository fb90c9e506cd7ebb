import { readdirSync } from 'node:fs';
import path from 'node:path';
import { ConfigMap, type IConfigMap } from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';
import { metricNames } from './promql';
import { OWN_SECRETS, SERVICES } from './services';
import {
  isObj,
  type Obj,
  parseYaml,
  problemsOf,
  readKustomization,
  readListedResources,
  readRepoFile,
  repoFileExists,
  repoRoot,
  selects,
} from './support';

const DIR = 'k8s/observability';
/** Grafana's reference to the dashboard's `datasource` variable (not a JS template). */
const DATASOURCE = ['$', '{datasource}'].join('');

function readObs(file: string): Obj {
  const parsed = parseYaml(readRepoFile(`${DIR}/${file}`), `${DIR}/${file}`, '1.1');
  if (!isObj(parsed)) throw new Error(`${DIR}/${file} is not a YAML mapping`);
  return parsed;
}

const component = readObs('kustomization.yaml');
const componentResources = (component.resources as string[]).map((file) => ({ file, obj: readObs(file) }));
const serviceMonitors = componentResources
  .filter(({ obj }) => obj.kind === 'ServiceMonitor')
  .map((r) => r.obj);
const rule = componentResources.find(({ obj }) => obj.kind === 'PrometheusRule')?.obj;
const baseServices = readListedResources()
  .map(({ obj }) => obj)
  .filter((obj) => obj.kind === 'Service');

/** GitHub's anchor of a Markdown heading (lower case, punctuation dropped, spaces as dashes). */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');
}

/** Anchors of docs/runbook.md: its headings' and any explicit `id="…"`. */
function runbookAnchors(text = readRepoFile('docs/runbook.md')): Set<string> {
  const anchors = new Set<string>();
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) anchors.add(slug(m[1] as string));
  for (const m of text.matchAll(/\bid="([^"]+)"/g)) anchors.add(m[1] as string);
  return anchors;
}

/** `HttpServerErrorRatioHigh` → `http-server-error-ratio-high`. */
const kebab = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();

interface Rule {
  group: string;
  alert?: unknown;
  record?: unknown;
  expr?: unknown;
  for?: unknown;
  labels?: unknown;
  annotations?: unknown;
}

function rulesOf(obj: Obj | undefined): Rule[] {
  const groups = isObj(obj?.spec) ? obj.spec.groups : undefined;
  if (!Array.isArray(groups)) return [];
  return groups.flatMap((g) =>
    isObj(g) && Array.isArray(g.rules) ? g.rules.map((r) => ({ group: String(g.name), ...(r as Obj) })) : [],
  );
}

/** What is wrong with a PrometheusRule, as messages (none when it is well formed). */
function ruleProblems(obj: Obj, anchors: Set<string>): string[] {
  return problemsOf((problem) => {
    if (obj.apiVersion !== 'monitoring.coreos.com/v1') problem(`apiVersion ${String(obj.apiVersion)}`);
    if (obj.kind !== 'PrometheusRule') problem(`kind ${String(obj.kind)}`);
    if (!isObj(obj.metadata) || typeof obj.metadata.name !== 'string') problem('no metadata.name');
    const groups = isObj(obj.spec) ? obj.spec.groups : undefined;
    if (!Array.isArray(groups) || groups.length === 0) return problem('no spec.groups');
    const names = groups.map((g) => (isObj(g) ? g.name : undefined));
    if (!names.every((n) => typeof n === 'string' && n !== '')) problem('a group without a name');
    if (new Set(names).size !== names.length) problem('two groups share a name');
    for (const g of groups) {
      if (!isObj(g) || !Array.isArray(g.rules) || g.rules.length === 0)
        problem(`group ${String(names)}: no rules`);
    }
    for (const r of rulesOf(obj)) {
      const id = `${r.group}/${String(r.alert)}`;
      if (typeof r.alert !== 'string' || !/^[A-Z][A-Za-z0-9]+$/.test(r.alert)) problem(`${id}: alert name`);
      if (r.record !== undefined) problem(`${id}: a recording rule among the alerts`);
      if (typeof r.expr !== 'string' || r.expr.trim() === '') problem(`${id}: no expr`);
      else {
        try {
          if (metricNames(r.expr).length === 0) problem(`${id}: the expression selects no metric`);
        } catch (error) {
          problem(`${id}: ${(error as Error).message}`);
        }
        const open = (r.expr.match(/[({[]/g) ?? []).length;
        const close = (r.expr.match(/[)}\]]/g) ?? []).length;
        if (open !== close) problem(`${id}: unbalanced brackets`);
      }
      if (typeof r.for !== 'string' || !/^\d+[smh]$/.test(r.for)) problem(`${id}: for must be a duration`);
      const severity = isObj(r.labels) ? r.labels.severity : undefined;
      if (severity !== 'critical' && severity !== 'warning') problem(`${id}: severity ${String(severity)}`);
      const a = isObj(r.annotations) ? r.annotations : {};
      for (const key of ['summary', 'description']) {
        if (typeof a[key] !== 'string' || a[key] === '') problem(`${id}: no ${key}`);
      }
      const url = typeof a.runbook_url === 'string' ? a.runbook_url : '';
      const anchor = /(?:^|\/)docs\/runbook\.md#([a-z0-9-]+)$/.exec(url)?.[1];
      if (!anchor) problem(`${id}: runbook_url ${url || '(none)'} is not docs/runbook.md#<anchor>`);
      else {
        if (typeof r.alert === 'string' && anchor !== kebab(r.alert))
          problem(`${id}: runbook anchor ${anchor}, expected ${kebab(r.alert)}`);
        if (!anchors.has(anchor)) problem(`${id}: docs/runbook.md has no section #${anchor}`);
      }
    }
  });
}

/** What is wrong with a ServiceMonitor's shape and its match with the base's Services. */
function monitorProblems(obj: Obj, services: readonly Obj[]): string[] {
  return problemsOf((problem) => {
    const name = isObj(obj.metadata) ? obj.metadata.name : undefined;
    if (obj.apiVersion !== 'monitoring.coreos.com/v1')
      problem(`${name}: apiVersion ${String(obj.apiVersion)}`);
    if (obj.kind !== 'ServiceMonitor') problem(`${name}: kind ${String(obj.kind)}`);
    if (typeof name !== 'string') problem('no metadata.name');
    const spec = isObj(obj.spec) ? obj.spec : {};
    const matchLabels = isObj(spec.selector) ? spec.selector.matchLabels : undefined;
    if (!isObj(matchLabels) || Object.keys(matchLabels).length === 0)
      problem(`${name}: no selector.matchLabels`);
    const selected = services.filter((s) => isObj(s.metadata) && selects(matchLabels, s.metadata.labels));
    if (selected.length !== 1) problem(`${name}: selects ${selected.length} Services, expected 1`);
    const endpoints = Array.isArray(spec.endpoints) ? spec.endpoints : [];
    if (endpoints.length === 0) problem(`${name}: no endpoints`);
    for (const e of endpoints) {
      if (!isObj(e) || typeof e.port !== 'string') {
        problem(`${name}: an endpoint without a port name`);
        continue;
      }
      if (typeof e.path !== 'string' || !e.path.startsWith('/')) problem(`${name}: endpoint path`);
      if (e.honorLabels !== true)
        problem(`${name}: honorLabels must be true (the services' own service label)`);
      for (const s of selected) {
        const ports = isObj(s.spec) && Array.isArray(s.spec.ports) ? s.spec.ports : [];
        if (!ports.some((p) => isObj(p) && p.name === e.port))
          problem(`${name}: Service ${String(isObj(s.metadata) && s.metadata.name)} has no port ${e.port}`);
      }
    }
  });
}

/** The monitor scraping a service: the one selecting a Service whose pods are that service's. */
function monitorOf(service: string): { monitor: Obj; target: Obj } {
  const found = serviceMonitors.flatMap((monitor) => {
    const matchLabels =
      isObj(monitor.spec) && isObj(monitor.spec.selector) ? monitor.spec.selector.matchLabels : {};
    return baseServices
      .filter((s) => isObj(s.metadata) && selects(matchLabels, s.metadata.labels))
      .filter(
        (s) =>
          isObj(s.spec) && isObj(s.spec.selector) && s.spec.selector['app.kubernetes.io/name'] === service,
      )
      .map((target) => ({ monitor, target }));
  });
  if (found.length !== 1) throw new Error(`${found.length} ServiceMonitors scrape ${service}, expected 1`);
  return found[0] as { monitor: Obj; target: Obj };
}

const endpointOf = (monitor: Obj): Obj => {
  const endpoints =
    isObj(monitor.spec) && Array.isArray(monitor.spec.endpoints) ? monitor.spec.endpoints : [];
  if (endpoints.length !== 1 || !isObj(endpoints[0])) throw new Error('expected one endpoint');
  return endpoints[0];
};

describe('k8s/observability: an optional kustomize component', () => {
  test('is a Component, so an overlay opts in and the base applies without the operator’s CRDs', () => {
    expect(component.apiVersion).toBe('kustomize.config.k8s.io/v1alpha1');
    expect(component.kind).toBe('Component');
    const base = readKustomization().raw;
    expect(JSON.stringify(base)).not.toMatch(/observability/);
    expect(base.components).toBeUndefined();
    const kinds = readListedResources().map(({ obj }) => obj.kind);
    expect(kinds).not.toContain('ServiceMonitor');
    expect(kinds).not.toContain('PrometheusRule');
  });

  test.each(component.resources as string[])('%s exists, parses and is a single named resource', (file) => {
    expect(repoFileExists(`${DIR}/${file}`)).toBe(true);
    const docs = parseAllDocuments(readRepoFile(`${DIR}/${file}`)).filter((d) => d.contents !== null);
    expect(docs).toHaveLength(1);
    const obj = readObs(file);
    expect(obj.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(['ServiceMonitor', 'PrometheusRule']).toContain(obj.kind);
    expect(isObj(obj.metadata) && typeof obj.metadata.name).toBe('string');
  });

  test('every YAML file of the directory is listed (an unlisted one would never be applied)', () => {
    const onDisk = readdirSync(path.join(repoRoot, DIR)).filter(
      (f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml',
    );
    expect([...onDisk].sort()).toEqual([...(component.resources as string[])].sort());
  });

  test('generates the dashboard ConfigMap, labelled for Grafana’s sidecar, valid and small enough to apply', () => {
    const generators = component.configMapGenerator;
    expect(Array.isArray(generators) && generators.length).toBe(1);
    const gen = (generators as Obj[])[0] as Obj;
    const options = gen.options as Obj;
    expect((options.labels as Obj).grafana_dashboard).toBe('1');
    const files = gen.files as string[];
    expect(files).toEqual(['platform.json=dashboards/platform.json']);
    const text = readRepoFile(`${DIR}/dashboards/platform.json`);
    const configMap: Obj = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: gen.name, labels: options.labels },
      data: { 'platform.json': text },
    };
    expect(() => new ConfigMap(configMap as unknown as IConfigMap).validate()).not.toThrow();
    // `kubectl apply` (client side) keeps the whole object in an annotation limited to 256 KiB.
    expect(Buffer.byteLength(text)).toBeLessThan(200 * 1024);
  });
});

describe('ServiceMonitors', () => {
  test('each is well formed and matches exactly one Service of the base, on a port it has', () => {
    expect(serviceMonitors.length).toBeGreaterThan(0);
    for (const monitor of serviceMonitors) expect(monitorProblems(monitor, baseServices)).toEqual([]);
  });

  test.each(SERVICES.map((s) => s.name))('%s is scraped exactly once, where it serves /metrics', (name) => {
    const { monitor, target } = monitorOf(name);
    const endpoint = endpointOf(monitor);
    if (name === 'gateway') {
      // The ops port, its path, with the ops token from the gateway's own Secret.
      expect(isObj(target.metadata) && target.metadata.name).toBe('gateway-ops');
      expect(endpoint).toMatchObject({ port: 'ops', path: '/ops/metrics' });
      const credentials = (endpoint.authorization as Obj).credentials as Obj;
      expect(credentials).toEqual({ name: 'gateway-credentials', key: 'OPS_TOKEN' });
      const secret = OWN_SECRETS.find((s) => s.secret === credentials.name);
      expect(secret?.service).toBe('gateway');
      expect(secret?.keys).toContain(credentials.key);
    } else {
      expect(isObj(target.metadata) && target.metadata.name).toBe(name);
      expect(endpoint).toMatchObject({ port: 'http', path: '/metrics' });
      expect(endpoint.authorization).toBeUndefined();
    }
    // The target's own series (up) get the platform's service name, not the Service's.
    expect(endpoint.relabelings).toEqual([
      {
        action: 'replace',
        sourceLabels: ['__meta_kubernetes_service_label_app_kubernetes_io_name'],
        targetLabel: 'service',
      },
    ]);
  });

  test('none scrapes a port that faces outside the cluster (partner API, provider callbacks)', () => {
    expect(serviceMonitors).toHaveLength(SERVICES.length);
    for (const s of SERVICES) {
      const { monitor, target } = monitorOf(s.name);
      expect(s.publicPorts).not.toContain(endpointOf(monitor).port);
      expect(['gateway', 'payments-callbacks']).not.toContain(isObj(target.metadata) && target.metadata.name);
    }
  });

  test('the check catches a selector that matches no Service, and a port name the Service lacks', () => {
    const monitor = structuredClone(monitorOf('webhooks').monitor);
    ((monitor.spec as Obj).endpoints as Obj[])[0] = { ...endpointOf(monitor), port: 'metrics' };
    expect(monitorProblems(monitor, baseServices)).toEqual([
      'webhooks: Service webhooks has no port metrics',
    ]);
    ((monitor.spec as Obj).selector as Obj).matchLabels = { 'app.kubernetes.io/name': 'webhook' };
    expect(monitorProblems(monitor, baseServices)).toEqual(['webhooks: selects 0 Services, expected 1']);
  });
});

describe('the PrometheusRule', () => {
  const anchors = runbookAnchors();

  test('every rule is an alert with expr, for, severity, summary, description and a runbook section', () => {
    expect(rule).toBeDefined();
    expect(ruleProblems(rule as Obj, anchors)).toEqual([]);
  });

  test('covers the alerts the ops issue asks for', () => {
    const exprs = rulesOf(rule).map((r) => String(r.expr));
    for (const name of [
      'webhook_deliveries_total',
      'queue_oldest_waiting_age_seconds',
      'queue_jobs',
      'queue_jobs_processed_total',
      'circuit_breaker_state',
      'payouts_total',
      'premium_collections_total',
      'settlement_reports_overdue',
      'outbox_pending_documents',
      'outbox_relay_lag_seconds_bucket',
      'http_request_duration_seconds_count',
      'rate_limit_rejections_total',
      'auth_failures_total',
      'up',
      'chain_activation_duration_seconds_bucket',
      'determinations_unattributed_total',
      'rate_source_refusals_total',
    ]) {
      expect(exprs.some((e) => metricNames(e).includes(name))).toBe(true);
    }
    // Redis not answering scrapes: absent(queue_jobs) for every service.
    for (const s of SERVICES) expect(exprs).toContain(`absent(queue_jobs{service="${s.name}"})`);
    // Every breaker the services have.
    const breakers = exprs.filter((e) => e.includes('circuit_breaker_state')).join(' ');
    for (const b of ['chain', 'mpesa', 'rate_source']) expect(breakers).toMatch(new RegExp(`\\b${b}\\b`));
  });

  test('each runbook section belongs to an alert (no orphan sections)', () => {
    const alerts = new Set(rulesOf(rule).map((r) => kebab(String(r.alert))));
    const sections = [...readRepoFile('docs/runbook.md').matchAll(/^## (.+)$/gm)].map((m) =>
      slug(m[1] as string),
    );
    expect(sections.filter((s) => !alerts.has(s))).toEqual([]);
    expect([...alerts].filter((a) => !sections.includes(a))).toEqual([]);
  });

  test('the check catches a rule without for, a bad severity, a missing anchor and an unknown function', () => {
    const broken = structuredClone(rule as Obj);
    const first = (((broken.spec as Obj).groups as Obj[])[0] as Obj).rules as Obj[];
    const r = first[0] as Obj;
    delete r.for;
    (r.labels as Obj).severity = 'page';
    (r.annotations as Obj).runbook_url = 'docs/runbook.md#no-such-section';
    r.expr = 'rte(http_request_duration_seconds_count[5m]) > 1';
    const name = `${String(((broken.spec as Obj).groups as Obj[])[0]?.name)}/${String(r.alert)}`;
    expect(ruleProblems(broken, anchors)).toEqual([
      `${name}: rte(http_request_duration_seconds_count[5m]) > 1: unknown PromQL function rte`,
      `${name}: for must be a duration`,
      `${name}: severity page`,
      `${name}: runbook anchor no-such-section, expected ${kebab(String(r.alert))}`,
      `${name}: docs/runbook.md has no section #no-such-section`,
    ]);
  });
});

describe('the Grafana dashboard', () => {
  const dashboard = JSON.parse(readRepoFile(`${DIR}/dashboards/platform.json`)) as Obj;
  const panels = dashboard.panels as Obj[];

  test('has a datasource variable, and every panel and target uses it', () => {
    const vars = (dashboard.templating as { list: Obj[] }).list;
    expect(vars.find((v) => v.name === 'datasource')).toMatchObject({
      type: 'datasource',
      query: 'prometheus',
    });
    const queried = panels.filter((p) => p.type !== 'row');
    expect(queried.length).toBeGreaterThan(10);
    for (const p of queried) {
      expect(p.datasource).toEqual({ type: 'prometheus', uid: DATASOURCE });
      for (const t of p.targets as Obj[]) {
        expect(t.datasource).toEqual({ type: 'prometheus', uid: DATASOURCE });
        expect(() => metricNames(String(t.expr))).not.toThrow();
      }
    }
  });

  test('has the rows the ops issue asks for, unique panel ids and a stable uid', () => {
    expect(panels.filter((p) => p.type === 'row').map((p) => p.title)).toEqual([
      'Requests (per service and route)',
      'Queues',
      'Webhook deliveries',
      'Circuit breakers',
      'Money flows',
      'Determinations, settlement reports and activations',
      'Outbox',
      'Processes',
    ]);
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(dashboard.uid).toBe('parametric-platform');
    const exprs = panels.flatMap((p) => ((p.targets as Obj[] | undefined) ?? []).map((t) => String(t.expr)));
    for (const quantile of ['0.5', '0.95', '0.99'])
      expect(
        exprs.some((e) =>
          e.startsWith(`histogram_quantile(${quantile}, sum by (service, le) (rate(http_request`),
        ),
      ).toBe(true);
  });
});
