/**
 * A drought day: 10,000 determinations for 10,000 active policies of 10 organizations, ingested
 * through the ops batch door (1,000 per request, as an index pipeline would send them) → each
 * attributed (a policy look-up in the policy service), its amount computed, signed, stored →
 * `determination.delivered` relayed, delivered and verified (HMAC) at 10 local partner
 * receivers. The platform runs as `npm start` runs it: gateway, policy, determinations and
 * webhooks services, each its own process, on one MongoDB and one Redis.
 *
 * Printed: the ingest rate (determinations/s, first request to last batch answer), the time to
 * the last verified delivery, the platform's CPU per determination (CPU time of every platform
 * process over the round: the four services, MongoDB and Redis, not this load generator nor the
 * receivers, divided by the determinations delivered: the figure that sizes a cluster), and
 * beside them, measured in the same run, the bare rate of
 * RFC 8785 canonicalization + SHA-256 + Ed25519 signing of the same records in this process.
 * Medians of ROUNDS rounds (a fresh set of policies per round). A sample of the delivered
 * determinations is then read through the partner API and its signature verified with the
 * published JWKS.
 *
 *   npm run bench:determinations                 # 3 rounds of 10,000
 *   BENCH_DETERMINATIONS=2000 BENCH_ROUNDS=1 npm run bench:determinations
 */
import type { ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { canonicalBytes, verifyDetermination } from '@parametric/determination-verify';
import { startLocalMongo } from '@parametric/embedded-mongo';
import { startLocalChain } from '@parametric/local-chain';
import { freePort } from '@parametric/local-process';
import { startLocalRedis } from '@parametric/local-redis';
import { startWebhookReceiver, type WebhookReceiver } from '@parametric/webhook-receiver';
import mongoose from 'mongoose';
import { owedFigure } from '../services/determinations/src/determinations/amount';
import { generateSigningKeyPem, loadSigningKeys } from '../services/determinations/src/signing/keys';
import { signDetermination } from '../services/determinations/src/signing/sign';
import {
  json,
  median,
  pidListeningOn,
  processCpuMicros,
  report,
  startProcess,
  stopProcesses,
  waitReady,
} from './support/run';

const TOTAL = Number(process.env.BENCH_DETERMINATIONS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ORGANIZATIONS = 10;
const BATCH = 1_000;
/** Batch requests in flight at once (an index pipeline sending its day's output). */
const PARALLEL_BATCHES = 2;
const SAMPLE = 100;
const DAY = 86_400_000;

interface Partner {
  id: string;
  apiKey: string;
  receiver: WebhookReceiver;
}

interface BenchPolicy {
  id: string;
  policyNumber: string;
  organizationId: string;
}

/** One assessment as the index pipeline sends it. */
function assessmentOf(policy: BenchPolicy, round: number, i: number) {
  const now = Date.now();
  return {
    idempotencyKey: `drought-day-${round}-${policy.id}`,
    policyId: policy.id,
    kind: 'CROP_DAMAGE',
    methodologyVersion: 'chirps-rainfall-deficit/1.2.0',
    triggered: true,
    damagePercentBp: 1 + (i % 10_000),
    assessedAt: new Date(now - 60_000).toISOString(),
    evidence: {
      indexName: 'seasonal rainfall deficit',
      indexValue: 0.41,
      triggerThreshold: 0.25,
      exitThreshold: 0.73,
      dataSource: 'CHIRPS',
      dataSourceVersion: '2.0',
      periodStart: new Date(now - 30 * DAY).toISOString(),
      periodEnd: new Date(now).toISOString(),
      inputDataHashes: [
        { name: `chirps-${i}.tif`, sha256: createHash('sha256').update(String(i)).digest('hex') },
      ],
    },
  };
}

/**
 * 10,000 ACTIVE Tier 1 crop policies written straight into the policy service's collection: the
 * setup of the day, not what is measured (selling and activating them on chain is bench:policy).
 */
async function insertPolicies(
  db: mongoose.Connection,
  partners: Partner[],
  round: number,
): Promise<BenchPolicy[]> {
  const now = Date.now();
  const policies: BenchPolicy[] = [];
  const docs = Array.from({ length: TOTAL }, (_, i) => {
    const organizationId = (partners[i % partners.length] as Partner).id;
    const id = randomUUID();
    const policyNumber = `KE-2026${String(round).padStart(2, '0')}-${i.toString(36).toUpperCase().padStart(6, '0')}`;
    policies.push({ id, policyNumber, organizationId });
    return {
      _id: id,
      organizationId,
      policyNumber,
      farmerId: randomUUID(),
      productType: 'CROP',
      plotId: randomUUID(),
      herdId: null,
      season: null,
      coverageType: 'DROUGHT',
      durationDays: 180,
      currency: 'KES',
      exponent: 2,
      sumInsuredMinor: BigInt(5_000_000 + i),
      premiumMinor: 250_000n,
      rateTableVersion: 'bench',
      settlementMode: 'DETERMINATION',
      status: 'ACTIVE',
      premiumPaid: true,
      onChainPolicyId: String(i + 1),
      coverStartsAt: new Date(now - 10 * DAY),
      coverEndsAt: new Date(now + 170 * DAY),
      activatedAt: new Date(now - 10 * DAY),
      activatedVia: 'PARTNER',
      damageAssessments: [],
      outbox: [],
      outboxPending: false,
      createdAt: new Date(now - 11 * DAY),
      updatedAt: new Date(now - 10 * DAY),
    };
  });
  const collection = db.collection('policies');
  for (let i = 0; i < docs.length; i += 1_000)
    await collection.insertMany(docs.slice(i, i + 1_000) as never[]);
  return policies;
}

/** The bare rate: canonicalize + SHA-256 + Ed25519 sign of the same kind of record, in process. */
function bareSigningRate(policies: BenchPolicy[]): number {
  const keys = loadSigningKeys(generateSigningKeyPem());
  const payloads = policies.map((p, i) => {
    const { amountOwed } = owedFigure(
      {
        id: p.id,
        organizationId: p.organizationId,
        policyNumber: p.policyNumber,
        status: 'ACTIVE',
        productType: 'CROP',
        settlementMode: 'DETERMINATION',
        currency: 'KES',
        exponent: 2,
        sumInsuredMinor: String(5_000_000 + i),
        coverStartsAt: null,
        coverEndsAt: null,
      },
      1 + (i % 10_000),
    );
    return {
      determinationId: randomUUID(),
      policyId: p.id,
      policyNumber: p.policyNumber,
      kind: 'CROP_DAMAGE' as const,
      methodologyVersion: 'chirps-rainfall-deficit/1.2.0',
      triggered: true,
      damagePercentBp: 1 + (i % 10_000),
      assessedAt: new Date().toISOString(),
      settlementMode: 'DETERMINATION' as const,
      settledByMicrocrop: false,
      amountOwed,
      evidenceHash: createHash('sha256')
        .update(canonicalBytes(assessmentOf(p, 0, i).evidence))
        .digest('hex'),
    };
  });
  const started = process.hrtime.bigint();
  for (const payload of payloads) signDetermination(payload, keys);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return payloads.length / seconds;
}

async function main(): Promise<void> {
  const [mongo, redis, chain] = await Promise.all([startLocalMongo(), startLocalRedis(), startLocalChain()]);
  const children: ChildProcess[] = [];
  const partners: Partner[] = [];
  const policyDb = mongoose.createConnection(mongo.url, { dbName: 'policy' });
  try {
    const [gatewayPort, opsPort, policyPort, determinationsPort, webhooksPort] = await Promise.all(
      Array.from({ length: 5 }, () => freePort()),
    );
    const opsToken = randomBytes(24).toString('hex');
    const shared = {
      ...process.env,
      LOG_LEVEL: 'warn',
      MONGO_URL: mongo.url,
      REDIS_URL: redis.url,
      INTERNAL_SIGNING_SECRET: randomBytes(24).toString('hex'),
    };
    children.push(
      startProcess('services/webhooks/src/main.ts', {
        ...shared,
        WEBHOOKS_HOST: '127.0.0.1',
        WEBHOOKS_PORT: String(webhooksPort),
        WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
        ALLOW_INSECURE_WEBHOOKS: 'true',
      }),
      startProcess('services/policy/src/main.ts', {
        ...shared,
        POLICY_HOST: '127.0.0.1',
        POLICY_PORT: String(policyPort),
        CHAIN_RPC_URL: chain.rpcUrl,
        CHAIN_REGISTRY_ADDRESS: chain.registryAddress,
        CHAIN_PRIVATE_KEY: chain.ownerPrivateKey,
      }),
      startProcess('services/determinations/src/main.ts', {
        ...shared,
        DETERMINATIONS_HOST: '127.0.0.1',
        DETERMINATIONS_PORT: String(determinationsPort),
        POLICY_URL: `http://127.0.0.1:${policyPort}`,
        DETERMINATION_SIGNING_KEYS: generateSigningKeyPem(),
      }),
      startProcess('services/gateway/src/main.ts', {
        ...shared,
        GATEWAY_PORT: String(gatewayPort),
        OPS_PORT: String(opsPort),
        OPS_TOKEN: opsToken,
        API_KEY_PEPPER: randomBytes(24).toString('hex'),
        POLICY_URL: `http://127.0.0.1:${policyPort}`,
        DETERMINATIONS_URL: `http://127.0.0.1:${determinationsPort}`,
        WEBHOOKS_URL: `http://127.0.0.1:${webhooksPort}`,
        RATE_LIMIT_POINTS: '1000000000',
      }),
    );
    await waitReady([gatewayPort, policyPort, determinationsPort, webhooksPort]);
    const [webhooksChild, policyChild, determinationsChild, gatewayChild] = children;
    const platformPids: Record<string, number | undefined> = {
      gateway: gatewayChild?.pid,
      policy: policyChild?.pid,
      determinations: determinationsChild?.pid,
      webhooks: webhooksChild?.pid,
      mongo: pidListeningOn(Number(new URL(mongo.url).port)),
      redis: pidListeningOn(Number(new URL(redis.url).port)),
    };
    const cpuNow = () =>
      Object.fromEntries(Object.entries(platformPids).map(([name, pid]) => [name, processCpuMicros(pid)]));
    await policyDb.asPromise();
    const api = `http://127.0.0.1:${gatewayPort}/api`;
    const ops = `http://127.0.0.1:${opsPort}/ops`;
    const auth = { authorization: `Bearer ${opsToken}` };

    for (let i = 0; i < ORGANIZATIONS; i++) {
      const { organization } = await json<{ organization: { id: string; apiKey: string } }>(
        `${api}/auth/register-organization`,
        {
          method: 'POST',
          body: JSON.stringify({ name: `Drought Co-op ${i}`, type: 'COOPERATIVE', countryCode: 'KE' }),
        },
      );
      const receiver = await startWebhookReceiver();
      partners.push({ id: organization.id, apiKey: organization.apiKey, receiver });
      const { secret } = await json<{ secret: string }>(`${api}/organizations/me/webhook`, {
        method: 'PUT',
        headers: { 'x-api-key': organization.apiKey },
        body: JSON.stringify({ url: receiver.url }),
      });
      receiver.setSecret(secret);
    }

    const ingestRates: number[] = [];
    const endToEnd: number[] = [];
    const bareRates: number[] = [];
    /** µs of CPU per determination, per platform process, each round. */
    const cpuRounds: Array<Record<string, number>> = [];
    let lastRound: { policies: BenchPolicy[] } | undefined;
    for (let round = 1; round <= ROUNDS; round++) {
      const policies = await insertPolicies(policyDb, partners, round);
      const items = policies.map((p, i) => assessmentOf(p, round, i));
      const before = partners.map((p) => p.receiver.verified().length);
      const batches: unknown[][] = [];
      for (let i = 0; i < items.length; i += BATCH) batches.push(items.slice(i, i + BATCH));

      const cpuBefore = cpuNow();
      const started = process.hrtime.bigint();
      let next = 0;
      await Promise.all(
        Array.from({ length: PARALLEL_BATCHES }, async () => {
          while (next < batches.length) {
            const batch = batches[next++] as unknown[];
            const result = await json<{
              summary: { created: number; failed: number };
              results: { status: number; error?: unknown }[];
            }>(`${ops}/determinations/batch`, {
              method: 'POST',
              headers: auth,
              body: JSON.stringify({ items: batch }),
            });
            if (result.summary.created !== batch.length) {
              const refused = result.results.find((r) => r.status !== 201);
              throw new Error(
                `a batch created ${result.summary.created} of ${batch.length}; first refusal: ${JSON.stringify(refused)}`,
              );
            }
          }
        }),
      );
      const ingestSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      // Every partner has its share, verified (HMAC with its secret) by its own receiver.
      await Promise.all(
        partners.map((p, i) =>
          p.receiver.waitForCount(
            (before[i] as number) + TOTAL / ORGANIZATIONS,
            (d) => d.verified && !d.duplicate,
            600_000,
          ),
        ),
      );
      const deliveredSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      const cpuAfter = cpuNow();
      const cpu: Record<string, number> = {};
      for (const [name, end] of Object.entries(cpuAfter)) {
        const start = cpuBefore[name];
        if (start !== undefined && end !== undefined) cpu[name] = (end - start) / TOTAL;
      }
      cpuRounds.push(cpu);
      const bare = bareSigningRate(policies);
      ingestRates.push(TOTAL / ingestSeconds);
      endToEnd.push(deliveredSeconds);
      bareRates.push(bare);
      lastRound = { policies };
      console.log(
        `round ${round}: ingest ${(TOTAL / ingestSeconds).toFixed(0)} determinations/s (${ingestSeconds.toFixed(1)} s), last verified delivery after ${deliveredSeconds.toFixed(1)} s, platform CPU ${(sumOf(cpu) / 1000).toFixed(2)} ms per determination, bare sign ${bare.toFixed(0)}/s`,
      );
    }

    // A sample of the day, read as partners read it and verified with nothing but the JWKS.
    const jwks = await (await fetch(`${api}/.well-known/jwks.json`)).json();
    let verified = 0;
    const byOrganization = new Map(partners.map((p) => [p.id, p]));
    const sample = (lastRound?.policies ?? []).slice(0, SAMPLE);
    for (const policy of sample) {
      const partner = byOrganization.get(policy.organizationId) as Partner;
      const list = await json<{ determinationId: string }[]>(
        `${api}/determinations?policyId=${policy.id}&limit=1`,
        {
          headers: { 'x-api-key': partner.apiKey },
        },
      );
      const record = await json(`${api}/determinations/${list[0]?.determinationId}`, {
        headers: { 'x-api-key': partner.apiKey },
      });
      if (verifyDetermination(record, jwks).valid) verified++;
    }

    const ingest = median(ingestRates);
    const bare = median(bareRates);
    const delivered = median(endToEnd);
    const cpuMs = median(cpuRounds.map(sumOf)) / 1000;
    const cpuByProcess = Object.keys(platformPids)
      .map((name) => `${name} ${(median(cpuRounds.map((r) => r[name] ?? 0)) / 1000).toFixed(2)}`)
      .join(', ');
    console.log(`
Drought day: ${TOTAL.toLocaleString('en')} determinations, ${ORGANIZATIONS} organizations, batches of ${BATCH} (${PARALLEL_BATCHES} in flight); medians of ${ROUNDS} round(s)
  ingest through the ops batch door:     ${ingest.toFixed(0)} determinations/s
  to the last verified delivery:         ${median(endToEnd).toFixed(1)} s
  bare canonicalize + SHA-256 + Ed25519: ${bare.toFixed(0)} signatures/s (this process)
  ratio ingest / bare:                   ${((100 * ingest) / bare).toFixed(1)}%
  platform CPU per determination:        ${cpuMs.toFixed(2)} ms (${cpuByProcess})
  sample verified with the JWKS:         ${verified}/${sample.length}`);
    report([
      {
        benchmark: 'determinations',
        figure: `drought day, ${TOTAL} determinations end to end (ops batch door to verified determination.delivered)`,
        value: TOTAL / delivered,
        unit: 'determinations/s',
        target: '>= 500/s (10,000 in <= 20 s)',
        met: TOTAL / delivered >= 500,
      },
      {
        benchmark: 'determinations',
        figure: `platform CPU per determination (${cpuByProcess} ms)`,
        value: cpuMs,
        unit: 'ms',
        target: '<= 3 ms',
        met: cpuMs <= 3,
      },
    ]);
  } finally {
    await Promise.all(partners.map((p) => p.receiver.close()));
    await policyDb.close().catch(() => undefined);
    await stopProcesses(children);
    await Promise.all([mongo.stop(), redis.stop(), chain.stop()]);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

function sumOf(cpu: Record<string, number>): number {
  return Object.values(cpu).reduce((sum, v) => sum + v, 0);
}
