/**
 * Policy service through the gateway: purchases/s (`POST /api/policies/purchase`, every
 * one a new policy reserving capacity), `GET /api/policies/{id}` requests/s, and Tier 1
 * activations/s (`PUT /api/policies/{id}/activate`, each a PolicyRegistry transaction on a
 * local anvil plus the event), next to the bare registry client against the same kind of
 * chain. The gateway and the policy service run as separate processes, loaded by autocannon.
 *
 *   npm run bench:policy                  # 3 rounds x 10 s, 10 connections
 *   BENCH_SECONDS=5 npm run bench:policy
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRegistryClient, deployRegistry, localDevPrivateKey, startLocalChain } from '@parametric/chain';
import { startLocalMongo } from '@parametric/embedded-mongo';
import { freePort } from '@parametric/local-process';
import { startLocalRedis } from '@parametric/local-redis';
import autocannon from 'autocannon';
import { json, median, startProcess, stopProcesses, waitReady } from './support/run';

const ROUNDS = 3;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

async function main(): Promise<void> {
  const [mongo, redis, chain] = await Promise.all([startLocalMongo(), startLocalRedis(), startLocalChain()]);
  const children: ChildProcess[] = [];
  try {
    const [gatewayPort, opsPort, policyPort] = await Promise.all([freePort(), freePort(), freePort()]);
    const opsToken = randomBytes(24).toString('hex');
    const shared = {
      ...process.env,
      LOG_LEVEL: 'warn',
      MONGO_URL: mongo.url,
      INTERNAL_SIGNING_SECRET: randomBytes(24).toString('hex'),
    };
    children.push(
      startProcess('services/policy/src/main.ts', {
        ...shared,
        REDIS_URL: redis.url,
        POLICY_PORT: String(policyPort),
        CHAIN_RPC_URL: chain.rpcUrl,
        CHAIN_REGISTRY_ADDRESS: chain.registryAddress,
        CHAIN_PRIVATE_KEY: chain.ownerPrivateKey,
      }),
      startProcess('services/gateway/src/main.ts', {
        ...shared,
        REDIS_URL: redis.url,
        GATEWAY_PORT: String(gatewayPort),
        OPS_PORT: String(opsPort),
        OPS_TOKEN: opsToken,
        API_KEY_PEPPER: randomBytes(24).toString('hex'),
        POLICY_URL: `http://127.0.0.1:${policyPort}`,
        RATE_LIMIT_POINTS: '1000000000',
      }),
    );
    const api = `http://127.0.0.1:${gatewayPort}/api`;
    const ops = `http://127.0.0.1:${opsPort}/ops`;
    await waitReady([gatewayPort, policyPort]);
    const auth = { authorization: `Bearer ${opsToken}` };
    const { organization } = await json<{ organization: { id: string; apiKey: string } }>(
      `${api}/auth/register-organization`,
      {
        method: 'POST',
        body: JSON.stringify({ name: 'Bench Co-op', type: 'COOPERATIVE', countryCode: 'KE' }),
      },
    );
    const key = { 'x-api-key': organization.apiKey };
    await json(`${ops}/organizations/${organization.id}/kyb`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ status: 'VERIFIED' }),
    });
    await json(`${ops}/organizations/${organization.id}/licences`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ market: 'KE', licenceNumber: 'IRA-BENCH', expiresAt: '2099-01-01T00:00:00Z' }),
    });
    await json(`${ops}/organizations/${organization.id}/capacity`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ amount: 1e12, currency: 'KES', solvencyAttestedUntil: '2099-01-01T00:00:00Z' }),
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
    await json(`${ops}/farmers/${farmer.id}/kyc`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ status: 'APPROVED' }),
    });
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
    const { policy } = await json<{ policy: { id: string } }>(`${api}/policies/purchase`, {
      method: 'POST',
      headers: key,
      body: purchase,
    });

    const run = async (opts: autocannon.Options) => {
      const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts });
      if (r.non2xx > 0 || r.errors > 0)
        throw new Error(`${opts.url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
      return { rps: r.requests.average, p99: r.latency.p99 };
    };
    /** Buys `n` pending policies (10 at a time) for an activation round. */
    const pendingPolicies = async (n: number) => {
      const ids: string[] = [];
      while (ids.length < n) {
        const batch = await Promise.all(
          Array.from({ length: Math.min(10, n - ids.length) }, () =>
            json<{ policy: { id: string } }>(`${api}/policies/purchase`, {
              method: 'POST',
              headers: key,
              body: purchase,
            }),
          ),
        );
        ids.push(...batch.map((b) => b.policy.id));
      }
      return ids;
    };
    /** `n` activations, each of a different pending policy; req/s over the whole batch. */
    const activateAll = async (ids: string[]) => {
      let next = 0;
      const r = await autocannon({
        url: api,
        connections: CONNECTIONS,
        amount: ids.length,
        requests: [
          {
            method: 'PUT',
            headers: key,
            setupRequest: (req) => ({ ...req, path: `/api/policies/${ids[next++]}/activate` }),
          },
        ],
      });
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`activate: ${r.non2xx} non-2xx, ${r.errors} errors`);
      return { rps: r.requests.total / (r.duration || 1), p99: r.latency.p99 };
    };
    /** The chain alone: the registry client registering `n` policies, CONNECTIONS at a time. */
    const bareRegistrations = async (n: number) => {
      const privateKey = localDevPrivateKey(5);
      const client = createRegistryClient({
        rpcUrl: chain.rpcUrl,
        registryAddress: await deployRegistry(chain.rpcUrl, privateKey),
        privateKey,
      });
      try {
        let next = 0;
        const started = process.hrtime.bigint();
        await Promise.all(
          Array.from({ length: CONNECTIONS }, async () => {
            while (next < n) {
              const i = next++;
              await client.registerPolicy(`bare-${i}-${randomBytes(4).toString('hex')}`, { i });
            }
          }),
        );
        return n / (Number(process.hrtime.bigint() - started) / 1e9);
      } finally {
        await client.close();
      }
    };

    const ACTIVATIONS = Number(process.env.BENCH_ACTIVATIONS ?? 300);
    const activations: Array<{ rps: number; p99: number }> = [];
    const bare: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      activations.push(await activateAll(await pendingPolicies(ACTIVATIONS)));
      bare.push(await bareRegistrations(ACTIVATIONS));
    }

    const purchases: Array<{ rps: number; p99: number }> = [];
    const reads: Array<{ rps: number; p99: number }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      purchases.push(
        await run({
          url: `${api}/policies/purchase`,
          method: 'POST',
          headers: { ...key, 'content-type': 'application/json' },
          body: purchase,
        }),
      );
      reads.push(await run({ url: `${api}/policies/${policy.id}`, headers: key }));
    }
    console.log(
      `policy bench through the gateway: ${ROUNDS} rounds x ${SECONDS} s, ${CONNECTIONS} connections (medians)`,
    );
    const row = (label: string, xs: Array<{ rps: number; p99: number }>) =>
      console.log(
        `${label.padEnd(40)} ${median(xs.map((x) => x.rps))
          .toFixed(0)
          .padStart(7)} req/s   p99 ${median(xs.map((x) => x.p99))
          .toFixed(1)
          .padStart(6)} ms`,
      );
    row('POST /api/policies/purchase', purchases);
    row('GET /api/policies/{id}', reads);
    row(`PUT /api/policies/{id}/activate (${ACTIVATIONS}/round)`, activations);
    const bareRate = median(bare);
    console.log(
      `${'registry client alone (same chain)'.padEnd(40)} ${bareRate.toFixed(0).padStart(7)} reg/s`,
    );
    console.log(
      `activation through the platform / bare chain registration: ${(median(activations.map((a) => a.rps)) / bareRate).toFixed(2)}`,
    );
  } finally {
    await stopProcesses(children);
    await Promise.all([mongo.stop(), redis.stop(), chain.stop()]);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
