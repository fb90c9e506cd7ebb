/**
 * The NetworkPolicies of the rendered prod overlay (k8s/components/network-policies), read as a
 * CNI enforces them (test/deploy/network-policy.ts): every Service port of the platform, and who
 * may connect to it; every service, and where it may connect. Both are stated here as what the
 * platform needs (derived from the services' URLs in k8s/base/platform-config.env and their
 * Secrets), compared both ways (nothing admitted that is not needed: the ops port, the internal
 * APIs and their /metrics; nothing needed left out), and printed as the tables in
 * docs/deploy.md ("Network policies"), which must match the render. Offline; no cluster.
 */
import { ENVIRONMENTS, named, ofKind, overlayDir, render } from './kustomize';
import { egressRows, egressTable, ingressRows, ingressTable, policyTypes } from './network-policy';
import { at, listAt, nameOf, type Obj, readRepoFile } from './support';

const prod = render(overlayDir('prod'));

const PROXIES = 'ns envoy-gateway-system';
const PROMETHEUS = 'ns monitoring, pods app.kubernetes.io/name=prometheus';
const OPERATORS = 'ns parametric-operators';
const OPERATORS_VPN = 'cidr 198.51.100.0/28';

/**
 * Who must reach each Service port, and no one else: the public ports from the Gateway API
 * proxies only; the ops port from operators and Prometheus (the gateway's metrics are on it);
 * each internal API from the services that hold its URL, and Prometheus (GET /metrics shares the port).
 */
const INGRESS: Record<string, string[]> = {
  'gateway:3000': [PROXIES],
  'gateway-ops:3001': [OPERATORS, OPERATORS_VPN, PROMETHEUS],
  'webhooks:3000': ['pods gateway', PROMETHEUS],
  'policy:3000': ['pods gateway', 'pods determinations', 'pods payments', PROMETHEUS],
  'determinations:3000': ['pods gateway', 'pods payments', PROMETHEUS],
  'payments:3000': ['pods gateway', PROMETHEUS],
  'payments-callbacks:3001': [PROXIES],
};

const DNS = [
  'ns kube-system, pods k8s-app=kube-dns → 53/UDP',
  'ns kube-system, pods k8s-app=kube-dns → 53/TCP',
];
const DATASTORES = ['cidr 192.0.2.0/27 → 27017/TCP', 'cidr 192.0.2.32/27 → 6379/TCP'];
const PUBLIC_INTERNET =
  'cidr 0.0.0.0/0 except 0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.168.0.0/16 → 443/TCP';

/** Where each service must connect (besides DNS, MongoDB and Redis, which every one needs). */
const EGRESS: Record<string, string[]> = {
  gateway: [
    'pods webhooks → 3000/TCP',
    'pods policy → 3000/TCP',
    'pods determinations → 3000/TCP',
    'pods payments → 3000/TCP',
  ],
  // Partners' webhook URLs: any public address.
  webhooks: [PUBLIC_INTERNET],
  // The chain RPC (CHAIN_RPC_URL).
  policy: ['cidr 198.51.100.64/26 → 443/TCP'],
  determinations: ['pods policy → 3000/TCP'],
  // Daraja (MPESA_BASE_URL) and the rate source (RATE_SOURCE_URL).
  payments: [
    'pods policy → 3000/TCP',
    'pods determinations → 3000/TCP',
    'cidr 203.0.113.0/25 → 443/TCP',
    'cidr 203.0.113.128/25 → 443/TCP',
  ],
};

/** Ingress admitted that is not needed, or needed and not admitted, per Service port. */
function ingressProblems(objs: readonly Obj[]): string[] {
  const rows = ingressRows(objs);
  const problems: string[] = [];
  for (const row of rows) {
    const got = [...new Set(row.allowances.map((a) => a.peer))];
    const want = INGRESS[row.port];
    if (!want) {
      problems.push(`${row.port}: a Service port this test does not know; state who must reach it`);
      continue;
    }
    for (const peer of got)
      if (!want.includes(peer)) problems.push(`${row.port} admits ${peer}: not intended`);
    // `anyone` admits the required peers too (and is reported as not intended above).
    for (const peer of want)
      if (!got.includes(peer) && !got.includes('anyone'))
        problems.push(`${row.port} does not admit ${peer}: required`);
  }
  for (const port of Object.keys(INGRESS))
    if (!rows.some((r) => r.port === port)) problems.push(`${port}: no such Service port in the render`);
  return problems;
}

/** Egress allowed that is not needed, or needed and not allowed, per service; and each in-namespace call admitted at the other end. */
function egressProblems(objs: readonly Obj[]): string[] {
  const problems: string[] = [];
  const ingress = ingressRows(objs);
  for (const { service, allowances } of egressRows(objs)) {
    const got = [...new Set(allowances.map((a) => a.peer))];
    const want = [...DNS, ...DATASTORES, ...(EGRESS[service] ?? [])];
    for (const peer of got)
      if (!want.includes(peer)) problems.push(`${service} may connect to ${peer}: not intended`);
    for (const peer of want)
      if (!got.includes(peer)) problems.push(`${service} may not connect to ${peer}: required`);
    for (const peer of got) {
      const m = /^pods (\S+) → (\d+)\/TCP$/.exec(peer);
      if (!m) continue;
      const admitted = ingress.some(
        (row) =>
          row.podPort.startsWith(`${m[1]} ${m[2]} `) &&
          row.allowances.some((a) => a.peer === `pods ${service}`),
      );
      if (!admitted) problems.push(`${service} → ${m[1]}:${m[2]} is allowed out but not admitted in`);
    }
  }
  return problems;
}

/** Fails with the problems and the tables, so a failure shows who is admitted where. */
function expectNoProblems(problems: string[], objs: readonly Obj[]): void {
  if (problems.length > 0)
    throw new Error(
      `${problems.join('\n')}\n\nIngress:\n${ingressTable(objs)}\n\nEgress:\n${egressTable(objs)}`,
    );
}

/** A Markdown table's cells, row by row, without the padding the formatter adds or the separator row. */
function cells(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => !/^\|[\s|:-]+\|$/.test(line))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

/** The text between `<!-- name:start -->` and `<!-- name:end -->` in docs/deploy.md. */
function docBlock(name: string): string {
  const text = readRepoFile('docs/deploy.md');
  const m = new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)\\n<!-- ${name}:end -->`).exec(text);
  if (!m) throw new Error(`docs/deploy.md has no ${name} block`);
  return m[1] as string;
}

describe('NetworkPolicies of k8s/overlays/prod, rendered', () => {
  test('default-deny isolates every pod of the namespace for ingress and egress, allowing nothing itself', () => {
    const deny = named(prod, 'NetworkPolicy', 'default-deny');
    expect(at(deny, 'spec')).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    for (const policy of ofKind(prod, 'NetworkPolicy')) expect(policyTypes(policy).length).toBeGreaterThan(0);
  });

  test('every Service port admits exactly who needs it (ops port, internal APIs and /metrics included)', () => {
    expectNoProblems(ingressProblems(prod), prod);
  });

  test('every service connects exactly where it needs to, and each call inside the namespace is admitted at the other end', () => {
    expectNoProblems(egressProblems(prod), prod);
  });

  test('docs/deploy.md shows the admission and egress tables of the render', () => {
    expect(cells(docBlock('network-policy-ingress'))).toEqual(cells(ingressTable(prod)));
    expect(cells(docBlock('network-policy-egress'))).toEqual(cells(egressTable(prod)));
  });

  test('every CIDR placeholder the policies use is documented in docs/deploy.md', () => {
    const cidrs = new Set(
      ofKind(prod, 'NetworkPolicy').flatMap(
        (p) =>
          JSON.stringify(p)
            .match(/"cidr":"[^"]+"/g)
            ?.map((m) => m.slice(8, -1)) ?? [],
      ),
    );
    const doc = readRepoFile('docs/deploy.md');
    expect([...cidrs].filter((c) => !doc.includes(`\`${c}\``))).toEqual([]);
  });

  test.each(ENVIRONMENTS.filter((e) => e !== 'prod'))('%s renders the same policies', (env) => {
    const objs = render(overlayDir(env));
    expect(ofKind(objs, 'NetworkPolicy').map((p) => at(p, 'spec'))).toEqual(
      ofKind(prod, 'NetworkPolicy').map((p) => at(p, 'spec')),
    );
  });
});

describe('the checks fail on broken copies of the policies', () => {
  const withPolicy = (edit: (objs: Obj[]) => void) => {
    const copy = structuredClone(prod);
    edit(copy);
    return copy;
  };
  /** The render plus one more policy, for the pods of `service`. */
  const withExtraPolicy = (service: string, spec: Obj) =>
    withPolicy((o) =>
      o.push({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'extra', namespace: 'parametric-prod' },
        spec: { podSelector: { matchLabels: { 'app.kubernetes.io/name': service } }, ...spec },
      }),
    );

  test('the ops port opened to every namespace', () => {
    const objs = withExtraPolicy('gateway', {
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ namespaceSelector: {} }], ports: [{ protocol: 'TCP', port: 3001 }] }],
    });
    expect(ingressProblems(objs)).toEqual(['gateway-ops:3001 admits every namespace: not intended']);
  });

  test('an internal API (and its /metrics) opened to every pod of the namespace, by a rule without ports', () => {
    const objs = withExtraPolicy('policy', {
      ingress: [{ from: [{ podSelector: {} }] }],
    });
    expect(ingressProblems(objs)).toEqual(['policy:3000 admits every pod of the namespace: not intended']);
  });

  test('a rule without `from`: anyone', () => {
    const objs = withPolicy((o) => {
      const rule = listAt(named(o, 'NetworkPolicy', 'webhooks'), 'spec.ingress')[0] as Obj;
      delete rule.from;
    });
    expect(ingressProblems(objs)).toEqual(['webhooks:3000 admits anyone: not intended']);
  });

  test('the callback port no longer admitted from the proxies', () => {
    const objs = withPolicy((o) => {
      const spec = at(named(o, 'NetworkPolicy', 'payments'), 'spec') as Obj;
      spec.ingress = listAt(spec, 'ingress').slice(0, 1);
    });
    expect(ingressProblems(objs)).toEqual([`payments-callbacks:3001 does not admit ${PROXIES}: required`]);
  });

  test('pods no policy selects are open to anyone', () => {
    const objs = withPolicy((o) => {
      for (const d of ofKind(o, 'Deployment').filter((d) => nameOf(d) === 'webhooks'))
        (at(d, 'spec.template.metadata.labels') as Obj)['app.kubernetes.io/name'] = 'renamed';
      const svc = named(o, 'Service', 'webhooks');
      (at(svc, 'spec.selector') as Obj)['app.kubernetes.io/name'] = 'renamed';
      o.splice(o.indexOf(named(o, 'NetworkPolicy', 'default-deny')), 1);
      o.splice(o.indexOf(named(o, 'NetworkPolicy', 'datastores-egress')), 1);
    });
    expect(ingressProblems(objs)).toContain('webhooks:3000 admits anyone: not intended');
  });

  test('egress to everywhere, and a call allowed out but not admitted in', () => {
    const open = withExtraPolicy('payments', {
      policyTypes: ['Egress'],
      egress: [{}],
    });
    expect(egressProblems(open)).toEqual(['payments may connect to anywhere → every port: not intended']);
    const oneSided = withPolicy((o) => {
      const rule = listAt(named(o, 'NetworkPolicy', 'determinations'), 'spec.ingress')[0] as Obj;
      rule.from = listAt(rule, 'from').filter(
        (peer) => JSON.stringify(peer).includes('gateway') || JSON.stringify(peer).includes('monitoring'),
      );
    });
    expect(ingressProblems(oneSided)).toEqual(['determinations:3000 does not admit pods payments: required']);
    expect(egressProblems(oneSided)).toEqual([
      'payments → determinations:3000 is allowed out but not admitted in',
    ]);
  });
});
