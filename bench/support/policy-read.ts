/**
 * The policy read's two sides, as bench/policy.ts and bench/instructions.ts start them: the
 * platform (the gateway and the policy service, with an organization that may sell) and its
 * design floor (bench/support/floor-gateway.ts forwarding to bench/support/floor-policy.ts), each
 * as its own processes on the same MongoDB and Redis. `wrap` gives a process a command to run
 * under and extra node flags (bench/instructions.ts runs them under callgrind).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { freePort } from '@parametric/local-process';
import { ACCESS_LINES, EDGE_LINES_ONLY, serviceEnv, startBenchGateway } from './platform';
import { json, pidListeningOn, startNamed, type Wrap, waitReady } from './run';

export interface Stores {
  mongoUrl: string;
  redisUrl: string;
  redisPid: number | undefined;
  chain: { rpcUrl: string; registryAddress: string; ownerPrivateKey: string };
}

/** The gateway and the policy service, with a sellable organization. */
export interface PolicyPlatform {
  api: string;
  organizationId: string;
  key: { 'x-api-key': string };
  /** The processes a read passes through, for the CPU split. */
  pids: Record<string, number | undefined>;
  gateway: ChildProcess;
  policy: ChildProcess;
  purchase: string;
  policyDb: string;
  /** The gateway's API key pepper, for the duty floor's key check. */
  pepper: string;
}

/**
 * Starts both services (pushed onto `children` as they start, so the caller stops them), then
 * registers an organization, licenses and capitalises it through the ops API, and onboards a
 * farmer with a plot, so that `purchase` buys a pending policy.
 */
export async function startPolicyPlatform(
  stores: Stores,
  children: ChildProcess[],
  options: { wrap?: Wrap; readySeconds?: number } = {},
): Promise<PolicyPlatform> {
  const { wrap } = options;
  const [gatewayPort, opsPort, policyPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const opsToken = randomBytes(24).toString('hex');
  const pepper = randomBytes(24).toString('hex');
  const shared = serviceEnv(stores.mongoUrl, stores.redisUrl);
  const policyDb = 'policy';
  const policy = startNamed(
    'services/policy/src/main.ts',
    'policy',
    {
      ...shared,
      ...(EDGE_LINES_ONLY ? { LOG_LEVEL: 'warn' } : {}),
      MONGO_DB: policyDb,
      POLICY_PORT: String(policyPort),
      CHAIN_RPC_URL: stores.chain.rpcUrl,
      CHAIN_REGISTRY_ADDRESS: stores.chain.registryAddress,
      CHAIN_PRIVATE_KEY: stores.chain.ownerPrivateKey,
    },
    wrap,
  );
  children.push(policy);
  const gateway = startBenchGateway(shared, {
    gatewayPort,
    opsPort,
    opsToken,
    pepper,
    calls: { POLICY_URL: `http://127.0.0.1:${policyPort}` },
    wrap,
  });
  children.push(gateway);
  const api = `http://127.0.0.1:${gatewayPort}/api`;
  const ops = `http://127.0.0.1:${opsPort}/ops`;
  await waitReady([gatewayPort, policyPort], options.readySeconds);
  const auth = { authorization: `Bearer ${opsToken}` };
  const { organization } = await json<{ organization: { id: string; apiKey: string } }>(
    `${api}/auth/register-organization`,
    {
      method: 'POST',
      body: JSON.stringify({ name: 'Bench Co-op', type: 'COOPERATIVE', countryCode: 'KE' }),
    },
  );
  const key = { 'x-api-key': organization.apiKey };
  const asOps = (path: string, body: unknown) =>
    json(`${ops}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
  await asOps(`/organizations/${organization.id}/kyb`, { status: 'VERIFIED' });
  await asOps(`/organizations/${organization.id}/licences`, {
    market: 'KE',
    licenceNumber: 'IRA-BENCH',
    expiresAt: '2099-01-01T00:00:00Z',
  });
  await asOps(`/organizations/${organization.id}/capacity`, {
    amount: 1e12,
    currency: 'KES',
    solvencyAttestedUntil: '2099-01-01T00:00:00Z',
  });
  const farmer = await json<{ id: string }>(`${api}/farmers`, {
    method: 'POST',
    headers: key,
    body: JSON.stringify({
      firstName: 'A',
      lastName: 'B',
      phoneNumber: '+254700000001',
      nationalId: 'BENCH0001',
      region: 'Nakuru',
    }),
  });
  await asOps(`/farmers/${farmer.id}/kyc`, { status: 'APPROVED' });
  const plot = await json<{ id: string }>(`${api}/plots`, {
    method: 'POST',
    headers: key,
    body: JSON.stringify({
      farmerId: farmer.id,
      name: 'P',
      latitude: -0.3,
      longitude: 36.1,
      areaHectares: 1,
      cropType: 'MAIZE',
    }),
  });
  const purchase = JSON.stringify({
    farmerId: farmer.id,
    productType: 'CROP',
    plotId: plot.id,
    sumInsured: 50_000,
    coverageType: 'DROUGHT',
    durationDays: 180,
  });
  const pids = {
    bench: process.pid,
    gateway: gateway.pid,
    policy: policy.pid,
    mongo: pidListeningOn(Number(new URL(stores.mongoUrl).port)),
    redis: stores.redisPid,
  };
  return { api, organizationId: organization.id, key, purchase, policyDb, pids, gateway, policy, pepper };
}

/** Buys `n` pending policies through the API (10 at a time). */
export async function buyPolicies(stack: PolicyPlatform, n: number): Promise<string[]> {
  const ids: string[] = [];
  while (ids.length < n) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, n - ids.length) }, () =>
        json<{ policy: { id: string } }>(`${stack.api}/policies/purchase`, {
          method: 'POST',
          headers: stack.key,
          body: stack.purchase,
        }),
      ),
    );
    ids.push(...batch.map((b) => b.policy.id));
  }
  return ids;
}

/** The read's design floor: its gateway (the same partner limit) and its policy service. */
export interface PolicyFloor {
  /** `floor` or `duties`: its processes are `<name>-gateway` and `<name>-policy`. */
  name: 'floor' | 'duties';
  /** Where the floor's gateway listens (its reads are `${url}/api/policies/{id}`). */
  url: string;
  gateway: ChildProcess;
  policy: ChildProcess;
}

/**
 * The floor on the same Redis, with the gateway's partner limit (its budget as big as the
 * gateway's here), its policy service on the policy service's database. `duties`: the duty floor
 * instead (bench/support/floor-duties.ts), the API key checked with the gateway's own pepper, a
 * completion line per request in each process when the platform's services write one
 * (`BENCH_LOG_LEVEL`).
 */
export async function startPolicyFloor(
  stores: Stores,
  stack: PolicyPlatform,
  children: ChildProcess[],
  options: { wrap?: Wrap; readySeconds?: number; duties?: boolean } = {},
): Promise<PolicyFloor> {
  const { wrap } = options;
  const [gatewayPort, policyPort] = await Promise.all([freePort(), freePort()]);
  const dutyEnv = options.duties
    ? {
        FLOOR_DUTIES: '1',
        FLOOR_ACCESS_LINE: ACCESS_LINES ? '1' : '',
        FLOOR_HOP_SECRET: randomBytes(32).toString('hex'),
      }
    : {};
  const name = options.duties ? 'duties' : 'floor';
  const policy = startNamed(
    'bench/support/floor-policy.ts',
    `${name}-policy`,
    {
      ...process.env,
      ...dutyEnv,
      ...(EDGE_LINES_ONLY ? { FLOOR_ACCESS_LINE: '' } : {}),
      PORT: String(policyPort),
      MONGO_URL: stores.mongoUrl,
      MONGO_DB: stack.policyDb,
    },
    wrap,
  );
  children.push(policy);
  const gateway = startNamed(
    'bench/support/floor-gateway.ts',
    `${name}-gateway`,
    {
      ...process.env,
      ...dutyEnv,
      ...(options.duties
        ? { FLOOR_API_KEY_PEPPER: stack.pepper, FLOOR_API_KEY: stack.key['x-api-key'] }
        : {}),
      PORT: String(gatewayPort),
      REDIS_URL: stores.redisUrl,
      RATE_LIMIT_POINTS: '1000000000',
      FLOOR_ORGANIZATION_ID: stack.organizationId,
      FLOOR_POLICY_URL: `http://127.0.0.1:${policyPort}`,
    },
    wrap,
  );
  children.push(gateway);
  await waitReady([gatewayPort, policyPort], options.readySeconds);
  return { name, url: `http://127.0.0.1:${gatewayPort}`, gateway, policy };
}
