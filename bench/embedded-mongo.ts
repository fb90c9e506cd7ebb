/**
 * Embedded MongoDB throughput over a real socket, through mongoose, with the server in its
 * own process (started from the `embedded-mongod` CLI as mongodb-memory-server would), and
 * the server's own CPU cost per command in process.
 *
 *   npm run bench:mongo            # 20,000 documents
 *   BENCH_DOCS=5000 npm run bench:mongo
 *   BENCH_MONGOD_BIN=/other/checkout/tools/embedded-mongo/bin/embedded-mongod.js npm run bench:mongo
 *                                  # the socket figures against another server build (A/B)
 *
 * Every figure is the median of 3 rounds, after a warm-up pass that is not counted (the
 * first calls of a path run unoptimised code in the client and the server alike). The
 * baseline of the round-trip figures is the server's own `ping` on the same mongoose
 * connection, taking turns with them in short chunks, so machine noise moves both alike.
 * Round trips also show where their CPU goes: this process's (mongoose and the driver) and
 * the server process's (on Linux), per call.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { EMBEDDED_MONGOD_BIN } from '@parametric/embedded-mongo';
import { findOneLean } from '@parametric/mongo';
import { ObjectId, serialize, UUID } from 'bson';
import mongoose from 'mongoose';
import { runFind } from '../tools/embedded-mongo/src/query';
import { ServerState } from '../tools/embedded-mongo/src/state';
import { Collection } from '../tools/embedded-mongo/src/store/collection';
import { Connection } from '../tools/embedded-mongo/src/wire/connection';
import { type BenchFigure, median, report } from './support/run';

const DOCS = Number(process.env.BENCH_DOCS ?? 20_000);
const ROUNDS = 3;
const LOOKUPS = 2_000;
const SCANS = 100;
/** Calls of each operation before its measured rounds. */
const WARMUP = 500;
/** Documents with `pending: true`, as an outbox holds a handful of undelivered entries. */
const PENDING = 20;
/** Issue 13's starting point for `findById().lean()` over a socket on this machine. */
const ISSUE_FIND_BY_ID = 1_500;

async function startServer(): Promise<{ child: ChildProcess; port: number }> {
  const bin = process.env.BENCH_MONGOD_BIN ?? EMBEDDED_MONGOD_BIN;
  const child = spawn(process.execPath, [bin, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines) {
    const entry = JSON.parse(line) as { msg: string; attr: { port?: number } };
    if (entry.msg === 'Waiting for connections' && entry.attr.port) {
      lines.close();
      return { child, port: entry.attr.port };
    }
  }
  throw new Error('embedded-mongod exited before listening');
}

type Op = (i: number, round: number) => Promise<unknown>;

/** Operations take turns in chunks this long, so a burst of load elsewhere hits them alike. */
const CHUNK = 50;

/**
 * CPU time the server's main thread has used, in µs, from Linux's per-thread scheduler
 * statistics (nanoseconds; /proc/<pid>/stat counts 10 ms ticks); undefined elsewhere.
 */
function serverCpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e3;
  } catch {
    return undefined;
  }
}

interface Measured {
  /** Operations per second. */
  rate: number;
  /** This process's CPU per operation (mongoose and the driver), µs. */
  clientCpu: number;
  /** The server process's CPU per operation, µs, where the platform reports it. */
  serverCpu?: number;
}

/**
 * Each operation `count` times per round, the operations taking turns in chunks of CHUNK
 * calls; the median of ROUNDS for each figure. A warm-up pass (round -1, so per-round keys
 * never collide with measured ones) runs first and is not counted.
 */
async function interleaved(
  count: number,
  ops: Record<string, Op>,
  serverPid?: number,
): Promise<Record<string, Measured>> {
  for (const op of Object.values(ops)) {
    for (let i = 0; i < Math.min(WARMUP, Math.ceil(count / 4)); i++) await op(i, -1);
  }
  const rounds: Record<string, Measured[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    const spent = Object.fromEntries(Object.keys(ops).map((name) => [name, { ns: 0, client: 0, server: 0 }]));
    for (let from = 0; from < count; from += CHUNK) {
      for (const [name, op] of Object.entries(ops)) {
        const total = spent[name] as { ns: number; client: number; server: number };
        const serverBefore = serverCpuMicros(serverPid);
        const clientBefore = process.cpuUsage();
        const start = process.hrtime.bigint();
        for (let i = from; i < Math.min(count, from + CHUNK); i++) await op(i, round);
        total.ns += Number(process.hrtime.bigint() - start);
        const client = process.cpuUsage(clientBefore);
        total.client += client.user + client.system;
        total.server += (serverCpuMicros(serverPid) ?? 0) - (serverBefore ?? 0);
      }
    }
    for (const [name, total] of Object.entries(spent)) {
      const measured: Measured = { rate: count / (total.ns / 1e9), clientCpu: total.client / count };
      if (serverCpuMicros(serverPid) !== undefined) measured.serverCpu = total.server / count;
      rounds[name] = [...(rounds[name] ?? []), measured];
    }
  }
  return Object.fromEntries(
    Object.entries(rounds).map(([name, values]) => {
      const serverCpu = values.map((v) => v.serverCpu).filter((v): v is number => v !== undefined);
      const measured: Measured = {
        rate: median(values.map((v) => v.rate)),
        clientCpu: median(values.map((v) => v.clientCpu)),
      };
      if (serverCpu.length > 0) measured.serverCpu = median(serverCpu);
      return [name, measured];
    }),
  );
}

/** An OP_MSG request as a driver sends it. */
function opMsg(body: Record<string, unknown>): Buffer {
  const payload = serialize(body);
  const head = Buffer.alloc(21);
  head.writeInt32LE(head.length + payload.length, 0);
  head.writeInt32LE(1, 4); // requestID
  head.writeInt32LE(2013, 12); // OP_MSG; responseTo, flags and section kind 0 stay zero
  return Buffer.concat([head, payload]);
}

/**
 * The server's CPU time per command, in this process: OP_MSG bytes into a real `Connection`,
 * reply bytes out to a socket stand-in, no network and no client. What the server's own
 * changes move, where the socket figures are mostly the client's (mongoose and the driver).
 */
function serverCommandCost(count: number): BenchFigure[] {
  const socket = Object.assign(new EventEmitter(), {
    destroyed: false,
    setNoDelay: () => {},
    write: () => true,
    destroy: () => {},
  });
  new Connection(socket as unknown as Socket, new ServerState(), 1, () => {});
  const lsid = { id: new UUID() };
  const $db = 'bench';
  const send = (body: Record<string, unknown>) => socket.emit('data', opMsg({ ...body, lsid, $db }));
  send({ createIndexes: 'farmers', indexes: [{ key: { organizationId: 1 }, name: 'organizationId_1' }] });
  const ids = Array.from({ length: DOCS }, () => new ObjectId());
  for (let i = 0; i < DOCS; i += 1000) {
    const documents = ids.slice(i, i + 1000).map((_id, j) => ({
      _id,
      organizationId: `org-${(i + j) % 50}`,
      name: `Farmer ${i + j}`,
      region: 'Nakuru',
      __v: 0,
    }));
    send({ insert: 'farmers', documents, ordered: true });
  }
  const commands: Record<string, (i: number) => Record<string, unknown>> = {
    ping: () => ({ ping: 1 }),
    'find by _id (findById)': (i) => ({
      find: 'farmers',
      filter: { _id: ids[i % ids.length] },
      limit: 1,
      singleBatch: true,
      batchSize: 1,
    }),
    'insert one (create)': () => ({
      insert: 'farmers',
      documents: [{ _id: new ObjectId(), organizationId: 'org-new', name: 'x', __v: 0 }],
      ordered: true,
    }),
    'update by _id ($set)': (i) => ({
      update: 'farmers',
      updates: [{ q: { _id: ids[i % ids.length] }, u: { $set: { name: `n${i}` } } }],
      ordered: true,
    }),
    'find 100 by indexed field': (i) => ({
      find: 'farmers',
      filter: { organizationId: `org-${i % 50}` },
      limit: 100,
    }),
  };
  const costs: Record<string, number[]> = {};
  for (let round = -1; round < ROUNDS; round++) {
    for (const [name, make] of Object.entries(commands)) {
      const requests = Array.from({ length: round < 0 ? count / 4 : count }, (_, i) =>
        opMsg({ ...make(i), lsid, $db }),
      );
      const before = process.cpuUsage();
      for (const request of requests) socket.emit('data', request);
      const used = process.cpuUsage(before);
      // Round -1 warms the paths up and is not counted.
      if (round >= 0) costs[name] = [...(costs[name] ?? []), (used.user + used.system) / count];
    }
  }
  const ping = median(costs.ping as number[]);
  return Object.entries(costs).map(([name, values]) => {
    const value = median(values);
    return {
      benchmark: 'mongo',
      figure: `server CPU per command, in process: ${name}${name === 'ping' ? ' (baseline)' : ', vs ping'}`,
      value,
      unit: 'µs',
      ...(name === 'ping' ? {} : { baseline: ping, ratio: value / ping }),
    };
  });
}

/**
 * The same lookups inside the server's query engine, without the client and socket
 * round trip that dominates the end-to-end numbers: what an index saves per query.
 */
function serverSideLookups(docs: Array<Record<string, unknown>>): BenchFigure[] {
  const collection = new Collection('bench', 'farmers');
  collection.createIndex({ key: { nationalId: 1 }, name: 'nationalId_1', unique: true });
  docs.forEach((doc, i) => {
    collection.insert({ _id: i, ...doc });
  });
  const perOp = (count: number, filter: (i: number) => Record<string, unknown>) => {
    const rounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const start = process.hrtime.bigint();
      for (let i = 0; i < count; i++) {
        if (runFind(collection, filter(i), { limit: 1 }).length !== 1) throw new Error('lookup missed');
      }
      rounds.push(Number(process.hrtime.bigint() - start) / 1e3 / count);
    }
    return median(rounds);
  };
  const indexed = perOp(20_000, () => ({ nationalId: `ID${randomInt(DOCS)}` }));
  const scanned = perOp(SCANS, () => ({ unindexedRef: `ID${randomInt(DOCS)}` }));
  const operator = perOp(SCANS, () => ({
    unindexedRef: { $in: [`ID${randomInt(DOCS)}`, 'none'] },
    region: { $ne: null },
  }));
  const figure = (name: string, value: number): BenchFigure => ({
    benchmark: 'mongo',
    figure: `server-side find, ${DOCS} docs: ${name}`,
    value,
    unit: 'µs/query',
  });
  return [
    { ...figure('equality on a unique index', indexed), baseline: scanned, ratio: indexed / scanned },
    figure('equality on an unindexed field (full scan)', scanned),
    figure('operator filter on unindexed fields (full scan via mingo)', operator),
  ];
}

async function main(): Promise<void> {
  const { child, port } = await startServer();
  const connection = await mongoose
    .createConnection(`mongodb://127.0.0.1:${port}/`, { dbName: 'bench' })
    .asPromise();
  const db = connection.db;
  if (!db) throw new Error('no database handle on the connection');
  try {
    const Farmer = connection.model(
      'Farmer',
      new mongoose.Schema({
        organizationId: { type: String, index: true },
        phoneNumber: { type: String, unique: true },
        nationalId: { type: String, unique: true },
        // Same values as nationalId, deliberately without an index: the full-scan baseline.
        unindexedRef: String,
        name: String,
        region: String,
      }),
    );
    // Range and partial-index reads, kept apart so the farmers stay the documents issue 13's
    // findById figure was measured on.
    const Entry = connection.model(
      'Entry',
      new mongoose.Schema({
        recordedAt: { type: Date, index: true },
        unindexedRecordedAt: Date,
        // As the outbox relay's `outboxPending`: a partial index holding only `true`.
        pending: Boolean,
        unindexedPending: Boolean,
      }).index({ pending: 1 }, { partialFilterExpression: { pending: true } }),
    );
    await Promise.all([Farmer.init(), Entry.init()]);

    const epoch = Date.UTC(2026, 0, 1);
    const docs = Array.from({ length: DOCS }, (_, i) => ({
      organizationId: `org-${i % 50}`,
      phoneNumber: `+2547${String(i).padStart(8, '0')}`,
      nationalId: `ID${i}`,
      unindexedRef: `ID${i}`,
      name: `Farmer ${i}`,
      region: ['Nakuru', 'Kisumu', 'Machakos'][i % 3],
    }));
    const entries = Array.from({ length: DOCS }, (_, i) => ({
      recordedAt: new Date(epoch + i * 1000),
      unindexedRecordedAt: new Date(epoch + i * 1000),
      pending: i % Math.floor(DOCS / PENDING) === 0,
      unindexedPending: i % Math.floor(DOCS / PENDING) === 0,
    }));

    console.log(
      `embedded-mongod bench: ${DOCS} documents, median of ${ROUNDS} rounds, mongoose ${mongoose.version}, node ${process.version}`,
    );
    const batch = 1_000;
    const insertRounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      await Farmer.deleteMany({});
      const start = process.hrtime.bigint();
      for (let i = 0; i < DOCS; i += batch) await Farmer.insertMany(docs.slice(i, i + batch), { lean: true });
      insertRounds.push(DOCS / (Number(process.hrtime.bigint() - start) / 1e9));
    }

    for (let i = 0; i < DOCS; i += batch) await Entry.insertMany(entries.slice(i, i + batch), { lean: true });
    const ping = () => db.command({ ping: 1 });
    const ids = (await Farmer.find({}, { _id: 1 }).lean()).map((d) => d._id);
    const singles = Array.from({ length: 1_000 }, (_, i) => ({
      phoneNumber: `+2559${i}`,
      nationalId: `S${i}`,
    }));
    const trips = await interleaved(
      LOOKUPS,
      {
        ping,
        findById: () => Farmer.findById(ids[randomInt(ids.length)]).lean(),
        // The same read without a mongoose query, as tenant bindings' `readById` makes it.
        findOneLean: () => findOneLean(Farmer, { _id: ids[randomInt(ids.length)] }),
      },
      child.pid,
    );
    // Each round creates new documents, so the unique keys carry the round number.
    const creates = await interleaved(
      singles.length,
      {
        ping,
        create: (i, round) => {
          const s = singles[i] as (typeof singles)[number];
          return Farmer.create({
            name: 'x',
            phoneNumber: `${s.phoneNumber}-${round}`,
            nationalId: `${s.nationalId}-${round}`,
          });
        },
      },
      child.pid,
    );
    const lookups = await interleaved(LOOKUPS, {
      nationalId: () => Farmer.findOne({ nationalId: `ID${randomInt(DOCS)}` }).lean(),
      phoneNumber: () =>
        Farmer.findOne({ phoneNumber: `+2547${String(randomInt(DOCS)).padStart(8, '0')}` }).lean(),
    });
    const rangeOf = (field: string) => () => {
      const from = epoch + randomInt(DOCS - 10) * 1000;
      return Entry.find({ [field]: { $gte: new Date(from), $lt: new Date(from + 10_000) } }).lean();
    };
    const scans = await interleaved(SCANS, {
      unindexedRef: () => Farmer.findOne({ unindexedRef: `ID${randomInt(DOCS)}` }).lean(),
      range: rangeOf('recordedAt'),
      unindexedRange: rangeOf('unindexedRecordedAt'),
      pending: () => Entry.find({ pending: true }).limit(100).lean(),
      unindexedPending: () => Entry.find({ unindexedPending: true }).limit(100).lean(),
    });
    if ((await Entry.find({ pending: true }).lean()).length !== PENDING) throw new Error('pending count');

    const figure = (name: string, value: number, extra: Partial<BenchFigure> = {}): BenchFigure => ({
      benchmark: 'mongo',
      figure: name,
      value,
      unit: 'ops/s',
      ...extra,
    });
    const rateOf = (measured: Record<string, Measured>, name: string) => (measured[name] as Measured).rate;
    const vs = (baseline: number, value: number) => ({ baseline, ratio: value / baseline });
    const pingRate = rateOf(trips, 'ping');
    const findById = rateOf(trips, 'findById');
    /** Where one round trip's time goes: this process's CPU and the server's, per call. */
    const cpu = (
      label: string,
      measured: Measured | undefined,
      than: Measured | undefined,
    ): BenchFigure[] => {
      if (!measured || !than) return [];
      const out = [
        figure(`${label}: client CPU per call (mongoose + driver), vs ping`, measured.clientCpu, {
          unit: 'µs',
          ...vs(than.clientCpu, measured.clientCpu),
        }),
      ];
      if (measured.serverCpu !== undefined && than.serverCpu !== undefined) {
        out.push(
          figure(`${label}: server CPU per call, over the socket, vs ping`, measured.serverCpu, {
            unit: 'µs',
            ...vs(than.serverCpu, measured.serverCpu),
          }),
        );
      }
      return out;
    };
    console.log('| benchmark | figure | value | baseline | ratio | target | met |');
    console.log('| --- | --- | --- | --- | --- | --- | --- |');
    report([
      figure('ping, one round trip (baseline)', pingRate),
      figure('findById().lean() vs ping on the same connection', findById, {
        ...vs(pingRate, findById),
        target: '>= 0.50 of ping',
        met: findById / pingRate >= 0.5,
      }),
      figure('findById().lean() vs issue 13 start (1,500/s)', findById, {
        ...vs(ISSUE_FIND_BY_ID, findById),
        target: '>= 3x (4,500/s)',
        met: findById >= 3 * ISSUE_FIND_BY_ID,
      }),
      ...cpu('findById().lean()', trips.findById, trips.ping),
      ...(trips.findOneLean && trips.findById
        ? [
            figure(
              'findOneLean (the driver alone): client CPU per call, vs findById().lean()',
              trips.findOneLean.clientCpu,
              { unit: 'µs', ...vs(trips.findById.clientCpu, trips.findOneLean.clientCpu) },
            ),
          ]
        : []),
      figure('create(), one document per round trip, vs ping', rateOf(creates, 'create'), {
        ...vs(rateOf(creates, 'ping'), rateOf(creates, 'create')),
      }),
      ...cpu('create()', creates.create, creates.ping),
      figure(`insertMany (batches of ${batch}), 3 unique/indexed keys`, median(insertRounds), {
        unit: 'docs/s',
      }),
      figure('findOne({ nationalId }).lean(), unique index, vs full scan', rateOf(lookups, 'nationalId'), {
        ...vs(rateOf(scans, 'unindexedRef'), rateOf(lookups, 'nationalId')),
      }),
      figure('findOne({ phoneNumber }).lean(), unique index, vs full scan', rateOf(lookups, 'phoneNumber'), {
        ...vs(rateOf(scans, 'unindexedRef'), rateOf(lookups, 'phoneNumber')),
      }),
      figure('date range of 10 docs, indexed, vs unindexed scan', rateOf(scans, 'range'), {
        ...vs(rateOf(scans, 'unindexedRange'), rateOf(scans, 'range')),
      }),
      figure(`find({ pending: true }) (${PENDING} docs), partial index, vs scan`, rateOf(scans, 'pending'), {
        ...vs(rateOf(scans, 'unindexedPending'), rateOf(scans, 'pending')),
      }),
      ...serverSideLookups(docs),
      ...serverCommandCost(10_000),
    ]);
  } finally {
    await connection.close();
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
