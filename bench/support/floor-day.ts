/**
 * The design floor of the drought day (issue 24, target 1): the cheapest platform that still
 * makes the hops and writes the stores the design prescribes for a determination
 * (docs/architecture.md: who owns which collection, which queue carries what), each role its own
 * process as the services are, on one MongoDB and one Redis. `FLOOR_ROLE` picks the role:
 *
 * - `gateway`: the ops door (`POST /ops/determinations/batch`, the bearer token compared in
 *   constant time) and the partner's settlement report (`POST /api/determinations/:id/
 *   settlement-report`: the API key's SHA-256 looked up in memory, one partner rate-limit point
 *   in Redis), each forwarded over a kept-alive pool with the caller's organization in a header.
 * - `determinations`: a batch is validated (zod), its policies looked up in one request to the
 *   policy role, its idempotency keys claimed (one unordered `insertMany`), its evidence stored
 *   (one `insertMany`), its policies' cover taken (one `bulkWrite` of `$inc`s), each
 *   determination's amount computed in BigInt and signed (RFC 8785 canonical JSON, SHA-256,
 *   Ed25519), all inserted with their outbox flag set (one `insertMany`); then the
 *   `determination.delivered` events and the policy summaries queued (one `addBulk` each) and
 *   the flags cleared (one `updateMany`). A settlement report: the determination read, the report
 *   inserted, the determination updated with its flag, the event and summary queued, the flag
 *   cleared.
 * - `policy`: the batch look-up (one `find` by ids and organization), and the summaries queue:
 *   the jobs in hand written together (one `bulkWrite` of conditional `$push`/`$set`s).
 * - `webhooks`: the events queue: each event signed (HMAC-SHA256 over `timestamp.body`, the
 *   platform's headers, so the same receivers verify it), posted to its organization's endpoint
 *   over a kept-alive pool, and its delivery with its attempt recorded (the jobs in hand in one
 *   `insertMany`).
 *
 * What it leaves out is what the platform adds beyond the design's hops and stores: request ids,
 * logs, metrics, traces, signed internal contexts, deadlines, per-tenant repositories, schema
 * layers, retries and sweeps, the relays' separate passes. The bench checks that the floor's
 * answers carry what the driver reads and that the receivers verify every event.
 */
import { createHash, createHmac, createPrivateKey, randomUUID, sign, timingSafeEqual } from 'node:crypto';
import { type Job, Queue, Worker } from 'bullmq';
import canonicalize from 'canonicalize';
import express from 'express';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { Pool } from 'undici';
import { z } from 'zod';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}

const role = required('FLOOR_ROLE');
const prefix = 'floor';
const EVENTS = 'events';
const SUMMARIES = 'policy-summaries';

/** The jobs a worker has in hand, written together: each caller waits for its batch's one write. */
function batcher<T>(write: (items: T[]) => Promise<void>): (item: T) => Promise<void> {
  let held: Array<{ item: T; done: (err?: unknown) => void }> = [];
  return (item) =>
    new Promise<void>((resolve, reject) => {
      if (held.length === 0)
        setImmediate(() => {
          const batch = held;
          held = [];
          write(batch.map((b) => b.item)).then(
            () => {
              for (const b of batch) b.done();
            },
            (err) => {
              for (const b of batch) b.done(err);
            },
          );
        });
      held.push({ item, done: (err) => (err === undefined ? resolve() : reject(err)) });
    });
}

function app() {
  const server = express();
  server.disable('x-powered-by');
  server.set('etag', false);
  server.get('/readyz', (_req, res) => {
    res.status(200).end();
  });
  return server;
}

const listen = (server: express.Express, close: () => Promise<unknown>) => {
  const http = server.listen(Number(required('PORT')), '127.0.0.1');
  process.on('SIGTERM', () => http.close(() => close().finally(() => process.exit(0))));
};

async function gateway(): Promise<void> {
  const upstream = new Pool(required('FLOOR_DETERMINATIONS_URL'), { connections: 128 });
  const opsToken = Buffer.from(`Bearer ${required('FLOOR_OPS_TOKEN')}`);
  const mongo = await MongoClient.connect(required('MONGO_URL'));
  const keys = new Map<string, string>();
  for (const k of await mongo
    .db('gateway')
    .collection<{ _id: string; organizationId: string }>('api_keys')
    .find()
    .toArray())
    keys.set(k._id, k.organizationId);
  const redis = new Redis(required('REDIS_URL'), { enableAutoPipelining: true });
  const limiter = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${prefix}:rl:partner`,
    points: 1e9,
    duration: 60,
  });
  const server = app();
  const forward = async (
    path: string,
    organizationId: string | null,
    body: Buffer,
    res: express.Response,
  ) => {
    const reply = await upstream.request({
      path,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(organizationId ? { 'x-organization-id': organizationId } : {}),
      },
      body,
    });
    res
      .status(reply.statusCode)
      .type('application/json')
      .send(Buffer.from(await reply.body.arrayBuffer()));
  };
  server.post('/ops/determinations/batch', express.raw({ type: '*/*', limit: '20mb' }), async (req, res) => {
    const given = Buffer.from(req.headers.authorization ?? '');
    if (given.length !== opsToken.length || !timingSafeEqual(given, opsToken)) {
      res.status(401).json({ error: { code: 'UNAUTHORIZED' } });
      return;
    }
    await forward('/ops/determinations/batch', null, req.body as Buffer, res);
  });
  server.post('/api/determinations/:id/settlement-report', express.raw({ type: '*/*' }), async (req, res) => {
    const key = String(req.headers['x-api-key'] ?? '');
    const organizationId = keys.get(createHash('sha256').update(key).digest('hex'));
    if (!organizationId) {
      res.status(401).json({ error: { code: 'UNAUTHORIZED' } });
      return;
    }
    try {
      await limiter.consume(`org:${organizationId}`);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      res.status(429).json({ error: { code: 'RATE_LIMIT_EXCEEDED' } });
      return;
    }
    await forward(
      `/determinations/${encodeURIComponent(req.params.id)}/settlement-report`,
      organizationId,
      req.body as Buffer,
      res,
    );
  });
  listen(server, () => Promise.all([mongo.close(), redis.quit()]));
}

const assessment = z.strictObject({
  idempotencyKey: z.string().min(1).max(200),
  policyId: z.uuid(),
  kind: z.enum(['CROP_DAMAGE', 'LIVESTOCK_LOSS']),
  methodologyVersion: z.string().min(1).max(100),
  triggered: z.boolean(),
  damagePercentBp: z.number().int().min(0).max(10_000),
  assessedAt: z.iso.datetime(),
  evidence: z.strictObject({
    indexName: z.string(),
    indexValue: z.number(),
    triggerThreshold: z.number(),
    exitThreshold: z.number(),
    dataSource: z.string(),
    dataSourceVersion: z.string(),
    periodStart: z.iso.datetime(),
    periodEnd: z.iso.datetime(),
    inputDataHashes: z
      .array(z.strictObject({ name: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }))
      .max(100),
  }),
});
const batchBody = z.strictObject({ items: z.array(assessment).min(1).max(1_000) });
const reportBody = z.strictObject({
  partnerReference: z.string().min(1).max(100),
  outcome: z.enum(['SETTLED_FULL', 'SETTLED_PARTIAL', 'NOT_SETTLED']),
  method: z.string(),
  settledAmountMinor: z.string().regex(/^\d+$/),
  settlementCurrency: z.string().length(3),
  settledAt: z.iso.datetime(),
});

interface LookedUp {
  _id: string;
  organizationId: string;
  sumInsuredMinor: string;
  currency: string;
  exponent: number;
  settlementMode: string;
}

async function determinations(): Promise<void> {
  const mongo = await MongoClient.connect(required('MONGO_URL'));
  const db = mongo.db('determinations');
  const [keys, evidence, covers, stored, reports] = [
    'ingestion_keys',
    'determination_evidence',
    'policy_covers',
    'determinations',
    'settlement_reports',
  ].map((name) => db.collection<Record<string, unknown>>(name)) as [
    ReturnType<typeof db.collection<Record<string, unknown>>>,
    ReturnType<typeof db.collection<Record<string, unknown>>>,
    ReturnType<typeof db.collection<Record<string, unknown>>>,
    ReturnType<typeof db.collection<Record<string, unknown>>>,
    ReturnType<typeof db.collection<Record<string, unknown>>>,
  ];
  await stored.createIndex({ outboxPending: 1 }, { sparse: true });
  const connection = new Redis(required('REDIS_URL'), {
    maxRetriesPerRequest: null,
    enableAutoPipelining: true,
  });
  const events = new Queue(EVENTS, { connection, prefix });
  const summaries = new Queue(SUMMARIES, { connection, prefix });
  const policy = new Pool(required('FLOOR_POLICY_URL'), { connections: 16 });
  const signingKey = createPrivateKey(required('FLOOR_SIGNING_KEY'));

  const enqueue = async (
    docs: Array<Record<string, unknown> & { _id: string; organizationId: string }>,
    event: string,
  ) => {
    await Promise.all([
      events.addBulk(
        docs.map((d) => {
          const id = randomUUID();
          const { outboxPending: _, ...data } = d;
          return {
            name: event,
            data: { id, event, createdAt: new Date().toISOString(), organizationId: d.organizationId, data },
            opts: { jobId: id },
          };
        }),
      ),
      summaries.addBulk(
        docs.map((d) => ({
          name: 'DAMAGE_ASSESSMENT',
          data: {
            policyId: d.policyId,
            organizationId: d.organizationId,
            determinationId: d._id,
            revision: d.revision,
          },
          opts: { jobId: `${d._id}-${d.revision}` },
        })),
      ),
    ]);
    await stored.updateMany(
      { _id: { $in: docs.map((d) => d._id) } as never },
      { $set: { outboxPending: false } },
    );
  };

  const server = app();
  server.post('/ops/determinations/batch', express.json({ limit: '20mb' }), async (req, res) => {
    const parsed = batchBody.safeParse(req.body);
    if (!parsed.success) {
      res.status(400).json({ error: { code: 'INVALID_INPUT', message: parsed.error.message } });
      return;
    }
    const items = parsed.data.items;
    const reply = await policy.request({
      path: '/ops/policies/lookup',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ids: [...new Set(items.map((i) => i.policyId))] }),
    });
    const found = new Map(((await reply.body.json()) as LookedUp[]).map((p) => [p._id, p]));
    const now = new Date();
    const claims = await keys
      .insertMany(
        items.map((i) => ({ _id: i.idempotencyKey, createdAt: now }) as never),
        { ordered: false },
      )
      .then(
        () => new Set<number>(),
        (err: { writeErrors?: Array<{ index: number }> }) =>
          new Set((err.writeErrors ?? []).map((e) => e.index)),
      );
    const fresh = items.flatMap((item, i) =>
      claims.has(i) || !found.has(item.policyId)
        ? []
        : [{ item, policy: found.get(item.policyId) as LookedUp }],
    );
    const ids = fresh.map(() => randomUUID());
    await evidence.insertMany(fresh.map(({ item }, i) => ({ _id: ids[i], ...item.evidence }) as never));
    const owed = fresh.map(
      ({ item, policy: p }) => (BigInt(p.sumInsuredMinor) * BigInt(item.damagePercentBp)) / 10_000n,
    );
    const perPolicy = new Map<string, bigint>();
    for (const [i, { item }] of fresh.entries())
      perPolicy.set(item.policyId, (perPolicy.get(item.policyId) ?? 0n) + (owed[i] as bigint));
    await covers.bulkWrite(
      [...perPolicy].map(([policyId, minor]) => ({
        updateOne: { filter: { _id: policyId }, update: { $inc: { claimedMinor: minor } }, upsert: true },
      })) as never,
      { ordered: false },
    );
    const docs = fresh.map(({ item, policy: p }, i) => {
      const determination = {
        id: ids[i] as string,
        policyId: item.policyId,
        organizationId: p.organizationId,
        kind: item.kind,
        methodologyVersion: item.methodologyVersion,
        triggered: item.triggered,
        damagePercentBp: item.damagePercentBp,
        assessedAt: item.assessedAt,
        issuedAt: now.toISOString(),
        amountOwed: { amountMinor: String(owed[i]), currency: p.currency, exponent: p.exponent },
        evidence: item.evidence,
      };
      const digest = createHash('sha256')
        .update(canonicalize(determination) as string)
        .digest();
      const signature = sign(null, digest, signingKey).toString('base64url');
      return {
        _id: determination.id,
        ...determination,
        signature,
        revision: 1,
        partnerSettlementStatus: 'PENDING',
        outboxPending: true,
      };
    });
    await stored.insertMany(docs as never);
    const freshAt = new Map(fresh.map((f, at) => [f.item, at]));
    res.status(200).json({
      data: {
        summary: { created: docs.length },
        results: items.map((item, i) => {
          const at = freshAt.get(item) ?? -1;
          return at < 0
            ? { status: claims.has(i) ? 409 : 404 }
            : {
                status: 201,
                determination: {
                  determinationId: ids[at],
                  policyId: item.policyId,
                  owed: (docs[at] as { amountOwed: unknown }).amountOwed,
                },
              };
        }),
      },
    });
    await enqueue(docs, 'determination.delivered');
  });
  server.post('/determinations/:id/settlement-report', express.json(), async (req, res) => {
    const organizationId = String(req.headers['x-organization-id']);
    const parsed = reportBody.safeParse(req.body);
    if (!parsed.success) {
      res.status(400).json({ error: { code: 'INVALID_INPUT', message: parsed.error.message } });
      return;
    }
    const d = await stored.findOne({ _id: req.params.id as never, organizationId });
    if (!d) {
      res.status(404).json({ error: { code: 'NOT_FOUND' } });
      return;
    }
    const report = {
      _id: randomUUID(),
      determinationId: d._id,
      organizationId,
      ...parsed.data,
      recordedAt: new Date(),
    };
    await reports.insertOne(report as never);
    const updated = { ...d, partnerSettlementStatus: 'REPORTED', revision: 3, outboxPending: true };
    await stored.updateOne(
      { _id: d._id as never },
      { $set: { partnerSettlementStatus: 'REPORTED', revision: 3, outboxPending: true } },
    );
    res.status(201).json({ data: { settlementReport: { id: report._id } } });
    await enqueue([updated as never], 'determination.settlement_report_recorded');
  });
  listen(server, () => Promise.all([events.close(), summaries.close(), policy.close(), mongo.close()]));
}

async function policyRole(): Promise<void> {
  const mongo = await MongoClient.connect(required('MONGO_URL'));
  const policies = mongo.db('policy').collection<Record<string, unknown>>('policies');
  const server = app();
  server.post('/ops/policies/lookup', express.json({ limit: '2mb' }), async (req, res) => {
    const ids = z.strictObject({ ids: z.array(z.uuid()).max(1_000) }).parse(req.body).ids;
    const found = await policies
      .find(
        { _id: { $in: ids } as never, status: 'ACTIVE' },
        {
          projection: { organizationId: 1, sumInsuredMinor: 1, currency: 1, exponent: 1, settlementMode: 1 },
        },
      )
      .toArray();
    res.json(found.map((p) => ({ ...p, sumInsuredMinor: String(p.sumInsuredMinor) })));
  });
  const write = batcher<{
    policyId: string;
    organizationId: string;
    determinationId: string;
    revision: number;
  }>(async (items) => {
    await policies.bulkWrite(
      items.map((s) => ({
        updateOne:
          s.revision === 1
            ? {
                filter: {
                  _id: s.policyId,
                  organizationId: s.organizationId,
                  'damageAssessments.determinationId': { $ne: s.determinationId },
                },
                update: {
                  $push: { damageAssessments: { determinationId: s.determinationId, revision: s.revision } },
                },
              }
            : {
                filter: {
                  _id: s.policyId,
                  organizationId: s.organizationId,
                  damageAssessments: {
                    $elemMatch: { determinationId: s.determinationId, revision: { $lt: s.revision } },
                  },
                },
                update: {
                  $set: {
                    'damageAssessments.$': { determinationId: s.determinationId, revision: s.revision },
                  },
                },
              },
      })) as never,
      { ordered: false },
    );
  });
  const connection = new Redis(required('REDIS_URL'), {
    maxRetriesPerRequest: null,
    enableAutoPipelining: true,
  });
  const worker = new Worker(SUMMARIES, (job: Job) => write(job.data), {
    connection,
    prefix,
    concurrency: 200,
  });
  listen(server, () => Promise.all([worker.close(), mongo.close()]));
}

async function webhooks(): Promise<void> {
  const mongo = await MongoClient.connect(required('MONGO_URL'));
  const db = mongo.db('webhooks');
  const endpoints = new Map<string, { url: string; secret: string; pool: Pool }>();
  for (const e of await db
    .collection<{ _id: string; url: string; secret: string }>('webhook_endpoints')
    .find()
    .toArray()) {
    const url = new URL(e.url);
    endpoints.set(e._id, {
      url: url.pathname,
      secret: e.secret,
      pool: new Pool(url.origin, { connections: 16 }),
    });
  }
  const deliveries = db.collection('webhook_deliveries');
  const record = batcher<Record<string, unknown>>(async (docs) => {
    await deliveries.insertMany(docs as never);
  });
  const connection = new Redis(required('REDIS_URL'), {
    maxRetriesPerRequest: null,
    enableAutoPipelining: true,
  });
  const worker = new Worker(
    EVENTS,
    async (job: Job<{ id: string; event: string; organizationId: string }>) => {
      const endpoint = endpoints.get(job.data.organizationId);
      if (!endpoint) throw new Error(`no endpoint for ${job.data.organizationId}`);
      const body = JSON.stringify(job.data);
      // The platform's delivery id is the event's (receivers de-duplicate on it and check it is the signed body's id).
      const deliveryId = job.data.id;
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = createHmac('sha256', endpoint.secret).update(`${timestamp}.${body}`).digest('hex');
      const started = new Date();
      const reply = await endpoint.pool.request({
        path: endpoint.url,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Service-Webhooks/1.0',
          'x-service-event': job.data.event,
          'x-service-delivery': deliveryId,
          'x-service-timestamp': timestamp,
          'x-service-signature': signature,
        },
        body,
      });
      await reply.body.dump();
      if (reply.statusCode >= 300) throw new Error(`receiver answered ${reply.statusCode}`);
      await record({
        _id: deliveryId,
        eventId: job.data.id,
        organizationId: job.data.organizationId,
        status: 'DELIVERED',
        attempts: [{ at: started, status: reply.statusCode }],
      });
    },
    { connection, prefix, concurrency: 64 },
  );
  listen(app(), () => Promise.all([worker.close(), mongo.close()]));
}

const roles: Record<string, () => Promise<void>> = { gateway, determinations, policy: policyRole, webhooks };
const run = roles[role];
if (!run) throw new Error(`FLOOR_ROLE must be one of ${Object.keys(roles).join(', ')}`);
run().catch((err) => {
  console.error(err);
  process.exit(1);
});
