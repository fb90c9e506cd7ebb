/**
 * Which Deployment may read which secret key, stated once as a table and checked against every
 * manifest under k8s/ (every YAML document of every file, overlays included, listed in the
 * kustomization or not): the chain key only in policy, the webhook encryption key only in
 * webhooks, the provider credentials only in payments, the signing key only in determinations,
 * the ops token, the key pepper and the dashboard token keys only in the gateway, and no
 * Deployment referring to another service's Secret in any way (envFrom, secretKeyRef, a secret or
 * projected volume). Offline: the manifests are parsed, nothing is applied.
 */
import { parseAllDocuments } from 'yaml';
import { isObj, k8sFiles, type Obj } from './support';

const SHARED = ['MONGO_URL', 'REDIS_URL', 'INTERNAL_SIGNING_SECRET'].map((k) => `platform-secrets/${k}`);

/** Everything each Deployment may read from a Secret, as `<secret>/<key>`. */
const MAY_READ: Record<string, string[]> = {
  gateway: [
    ...SHARED,
    'gateway-credentials/OPS_TOKEN',
    'gateway-credentials/API_KEY_PEPPER',
    'gateway-dashboard-token-key/DASHBOARD_TOKEN_KEYS',
  ],
  webhooks: [...SHARED, 'webhooks-encryption-key/WEBHOOK_SECRET_KEY'],
  policy: [...SHARED, 'policy-chain-credentials/CHAIN_RPC_URL', 'policy-chain-credentials/CHAIN_PRIVATE_KEY'],
  determinations: [
    ...SHARED,
    'determinations-signing-key/DETERMINATION_SIGNING_KEYS',
    // Optional (tools/topology's optional secrets): absent in production.
    'determinations-signing-key/SANDBOX_SIGNING_KEYS',
  ],
  payments: [
    ...SHARED,
    ...[
      'MPESA_CONSUMER_KEY',
      'MPESA_CONSUMER_SECRET',
      'MPESA_SHORTCODE',
      'MPESA_PASSKEY',
      'MPESA_B2C_SHORTCODE',
      'MPESA_INITIATOR_NAME',
      'MPESA_SECURITY_CREDENTIAL',
      'PAYMENTS_CALLBACK_TOKEN',
    ].map((k) => `payments-provider-credentials/${k}`),
  ],
};

/** The secrets the issue names, and the one Deployment each may reach. */
const SENSITIVE: Record<string, string> = {
  CHAIN_PRIVATE_KEY: 'policy',
  WEBHOOK_SECRET_KEY: 'webhooks',
  DETERMINATION_SIGNING_KEYS: 'determinations',
  SANDBOX_SIGNING_KEYS: 'determinations',
  MPESA_CONSUMER_SECRET: 'payments',
  MPESA_PASSKEY: 'payments',
  MPESA_SECURITY_CREDENTIAL: 'payments',
  OPS_TOKEN: 'gateway',
  API_KEY_PEPPER: 'gateway',
};

interface Manifests {
  /** Every parsed document, with the file it is in. */
  docs: { file: string; obj: Obj }[];
}

function readManifests(files = k8sFiles()): Manifests {
  const docs = files
    .filter(({ file }) => /\.ya?ml$/.test(file))
    .flatMap(({ file, text }) =>
      parseAllDocuments(text, { version: '1.1' }).map((doc) => ({ file, obj: doc.toJS() as unknown })),
    )
    .filter((d): d is { file: string; obj: Obj } => isObj(d.obj));
  return { docs };
}

const nameOf = (obj: Obj): string => (isObj(obj.metadata) ? String(obj.metadata.name) : '');

/** Keys of each Secret the manifests (the example Secrets included) define. */
function secretKeys(m: Manifests): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const { obj } of m.docs) {
    if (obj.kind !== 'Secret') continue;
    const keys = [
      ...Object.keys(isObj(obj.stringData) ? obj.stringData : {}),
      ...Object.keys(isObj(obj.data) ? obj.data : {}),
    ];
    out.set(nameOf(obj), [...new Set([...(out.get(nameOf(obj)) ?? []), ...keys])]);
  }
  return out;
}

/**
 * What a pod spec can read from Secrets, as `<secret>/<key>`: a whole Secret (envFrom, a volume
 * without `items`) gives every key it has (`<secret>/*` when no manifest defines it), a
 * `secretKeyRef` or a volume's `items` the keys named.
 */
function readable(podSpec: unknown, keys: Map<string, string[]>): string[] {
  const found: string[] = [];
  const whole = (secret: string) => {
    const known = keys.get(secret);
    found.push(...(known ? known.map((k) => `${secret}/${k}`) : [`${secret}/*`]));
  };
  const some = (secret: string, items: unknown) => {
    if (Array.isArray(items) && items.length > 0)
      for (const item of items) found.push(`${secret}/${String(isObj(item) ? item.key : item)}`);
    else whole(secret);
  };
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    if (!isObj(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (isObj(value) && key === 'secretRef') whole(String(value.name));
      else if (isObj(value) && key === 'secretKeyRef')
        found.push(`${String(value.name)}/${String(value.key)}`);
      else if (isObj(value) && key === 'secret') some(String(value.secretName ?? value.name), value.items);
      walk(value);
    }
  };
  walk(podSpec);
  return [...new Set(found)].sort();
}

/** Each Deployment in the manifests (by name, with its file) and what it can read. */
function access(m: Manifests): { name: string; file: string; reads: string[] }[] {
  const keys = secretKeys(m);
  return m.docs
    .filter(({ obj }) => obj.kind === 'Deployment')
    .map(({ file, obj }) => ({
      name: nameOf(obj),
      file,
      reads: readable(isObj(obj.spec) && isObj(obj.spec.template) ? obj.spec.template.spec : undefined, keys),
    }));
}

/** What is wrong with the manifests' secret access, as messages (none when all is well). */
function accessProblems(m: Manifests): string[] {
  const problems: string[] = [];
  const deployments = access(m);
  for (const { name, file, reads } of deployments) {
    const allowed = MAY_READ[name];
    if (!allowed) {
      problems.push(`${file}: Deployment ${name} is not in the table of who may read which secret`);
      continue;
    }
    for (const entry of reads)
      if (!allowed.includes(entry)) problems.push(`${file}: Deployment ${name} can read ${entry}`);
    for (const entry of allowed)
      if (!reads.includes(entry)) problems.push(`${file}: Deployment ${name} does not get ${entry}`);
    // Another service's own Secret, in any way.
    const ownSecrets = new Set(
      Object.entries(MAY_READ)
        .filter(([other]) => other !== name)
        .flatMap(([, entries]) => entries.map((e) => e.split('/')[0]))
        .filter((secret) => secret !== 'platform-secrets'),
    );
    for (const entry of reads) {
      const secret = entry.split('/')[0] ?? '';
      if (ownSecrets.has(secret)) problems.push(`${file}: Deployment ${name} refers to ${secret}`);
    }
  }
  for (const [key, owner] of Object.entries(SENSITIVE)) {
    const holders = deployments.filter((d) => d.reads.some((e) => e.endsWith(`/${key}`) || e.endsWith('/*')));
    const names = [...new Set(holders.map((d) => d.name))];
    if (JSON.stringify(names) !== JSON.stringify([owner]))
      problems.push(`${key} reaches ${names.join(', ') || 'no Deployment'}, not ${owner} only`);
  }
  // platform-secrets, which every service reads, holds nothing but the shared keys.
  const shared = secretKeys(m).get('platform-secrets') ?? [];
  for (const key of shared)
    if (!SHARED.includes(`platform-secrets/${key}`)) problems.push(`platform-secrets holds ${key}`);
  return problems;
}

describe('who may read which secret key (every manifest under k8s/)', () => {
  const manifests = readManifests();

  test('every Deployment reads exactly what the table allows, and no other service’s Secret', () => {
    expect(
      access(manifests)
        .map((d) => d.name)
        .sort(),
    ).toEqual(Object.keys(MAY_READ).sort());
    expect(accessProblems(manifests)).toEqual([]);
  });

  test.each(Object.entries(SENSITIVE))('%s reaches the %s Deployment only', (key, owner) => {
    const holders = access(manifests).filter((d) => d.reads.some((e) => e.endsWith(`/${key}`)));
    expect(holders.map((d) => d.name)).toEqual([owner]);
  });

  test('platform-secrets holds only MONGO_URL, REDIS_URL and INTERNAL_SIGNING_SECRET', () => {
    expect(secretKeys(manifests).get('platform-secrets')?.sort()).toEqual(
      ['INTERNAL_SIGNING_SECRET', 'MONGO_URL', 'REDIS_URL'].sort(),
    );
  });

  // The check on copies broken in memory: each way of reaching another service's secret is seen.
  const deploymentOf = (m: Manifests, name: string): Obj => {
    const found = m.docs.find(({ obj }) => obj.kind === 'Deployment' && nameOf(obj) === name);
    if (!found) throw new Error(`no Deployment ${name}`);
    return found.obj;
  };
  const containerOf = (m: Manifests, name: string): Obj => {
    const spec = (deploymentOf(m, name).spec as Obj).template as Obj;
    return ((spec.spec as Obj).containers as Obj[])[0] as Obj;
  };
  const podOf = (m: Manifests, name: string): Obj =>
    ((deploymentOf(m, name).spec as Obj).template as Obj).spec as Obj;
  test.each<[string, (m: Manifests) => void]>([
    [
      'the gateway taking the chain key by secretKeyRef',
      (m) =>
        (containerOf(m, 'gateway').env as Obj[]).push({
          name: 'CHAIN_PRIVATE_KEY',
          valueFrom: { secretKeyRef: { name: 'policy-chain-credentials', key: 'CHAIN_PRIVATE_KEY' } },
        }),
    ],
    [
      'payments reading the webhooks encryption key Secret wholesale',
      (m) =>
        (containerOf(m, 'payments').envFrom as Obj[]).push({
          secretRef: { name: 'webhooks-encryption-key' },
        }),
    ],
    [
      'policy mounting the signing key as a volume',
      (m) =>
        (podOf(m, 'policy').volumes as Obj[]).push({
          name: 'keys',
          secret: { secretName: 'determinations-signing-key' },
        }),
    ],
    [
      'webhooks reading a Secret no manifest defines',
      (m) => (containerOf(m, 'webhooks').envFrom as Obj[]).push({ secretRef: { name: 'everything' } }),
    ],
    [
      'the chain key back in platform-secrets',
      (m) => {
        const secret = m.docs.find(({ obj }) => obj.kind === 'Secret' && nameOf(obj) === 'platform-secrets');
        if (!secret) throw new Error('no platform-secrets');
        (secret.obj.stringData as Obj).CHAIN_PRIVATE_KEY = 'CHANGE_ME';
      },
    ],
    [
      'policy without its chain credentials',
      (m) => {
        const container = containerOf(m, 'policy');
        container.env = (container.env as Obj[]).filter((e) => !String(e.name).startsWith('CHAIN_'));
      },
    ],
  ])('finds %s', (_what, breakIt) => {
    const copy = structuredClone(manifests);
    breakIt(copy);
    expect(accessProblems(copy)).not.toEqual([]);
  });
});
