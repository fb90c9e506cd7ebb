/**
 * Embedded MongoDB throughput over a real socket, through mongoose, with the server in its
 * own process (started from the `embedded-mongod` CLI as mongodb-memory-server would).
 *
 *   npm run bench:mongo            # 20,000 documents
 *   BENCH_DOCS=5000 npm run bench:mongo
 *
 * Prints the median of several rounds for each measurement; these machines are noisy, so
 * compare ratios within one run rather than absolute numbers across runs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { EMBEDDED_MONGOD_BIN } from '@parametric/embedded-mongo';
import mongoose from 'mongoose';
import { runFind } from '../libs/embedded-mongo/src/query';
import { Collection } from '../libs/embedded-mongo/src/store/collection';
import { median } from './support/run';

const DOCS = Number(process.env.BENCH_DOCS ?? 20_000);
const ROUNDS = 3;
const LOOKUPS = 2_000;
const SCANS = 100;

async function startServer(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [EMBEDDED_MONGOD_BIN, '--port', '0'], {
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

async function opsPerSecond(count: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < count; i++) await op(i);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    rounds.push(count / seconds);
  }
  return median(rounds);
}

function show(label: string, value: number, unit = 'ops/s'): void {
  console.log(`${label.padEnd(60)} ${value.toFixed(value < 100 ? 1 : 0).padStart(10)} ${unit}`);
}

/**
 * The same lookups inside the server's query engine, without the client and socket
 * round trip that dominates the end-to-end numbers: what an index saves per query.
 */
function serverSideLookups(docs: Array<Record<string, unknown>>): void {
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
  console.log(`server-side find, ${DOCS} documents (µs per query, median of ${ROUNDS}):`);
  show('  equality on a unique index', indexed, 'µs');
  show('  equality on an unindexed field (full scan)', scanned, 'µs');
  show('  operator filter on unindexed fields (full scan via mingo)', operator, 'µs');
  console.log(`server-side indexed / full-scan speed-up: ${(scanned / indexed).toFixed(0)}x`);
}

async function main(): Promise<void> {
  const { child, port } = await startServer();
  const connection = await mongoose
    .createConnection(`mongodb://127.0.0.1:${port}/`, { dbName: 'bench' })
    .asPromise();
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
    await Farmer.init();

    const docs = Array.from({ length: DOCS }, (_, i) => ({
      organizationId: `org-${i % 50}`,
      phoneNumber: `+2547${String(i).padStart(8, '0')}`,
      nationalId: `ID${i}`,
      unindexedRef: `ID${i}`,
      name: `Farmer ${i}`,
      region: ['Nakuru', 'Kisumu', 'Machakos'][i % 3],
    }));

    console.log(
      `embedded-mongod bench: ${DOCS} documents, median of ${ROUNDS} rounds, mongoose ${mongoose.version}`,
    );
    const batch = 1_000;
    const insertRounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      await Farmer.deleteMany({});
      const start = process.hrtime.bigint();
      for (let i = 0; i < DOCS; i += batch) await Farmer.insertMany(docs.slice(i, i + batch), { lean: true });
      insertRounds.push(DOCS / (Number(process.hrtime.bigint() - start) / 1e9));
    }
    show(`insertMany (batches of ${batch}), 3 unique/indexed keys`, median(insertRounds), 'docs/s');

    const singles = Array.from({ length: 1_000 }, (_, i) => ({
      phoneNumber: `+2559${i}`,
      nationalId: `S${i}`,
      name: 'x',
    }));
    let round = 0;
    const singleRate = await opsPerSecond(singles.length, async (i) => {
      if (i === 0) round++;
      const s = singles[i] as (typeof singles)[number];
      await Farmer.create({
        ...s,
        phoneNumber: `${s.phoneNumber}-${round}`,
        nationalId: `${s.nationalId}-${round}`,
      });
    });
    show('create() one document per round trip', singleRate, 'docs/s');

    const ids = (await Farmer.find({}, { _id: 1 }).lean()).map((d) => d._id);
    show(
      'findById(...).lean()',
      await opsPerSecond(LOOKUPS, () => Farmer.findById(ids[randomInt(ids.length)]).lean()),
    );

    const indexed = await opsPerSecond(LOOKUPS, () =>
      Farmer.findOne({ nationalId: `ID${randomInt(DOCS)}` }).lean(),
    );
    show('findOne({ nationalId }).lean() — unique index', indexed);
    const byPhone = await opsPerSecond(LOOKUPS, () =>
      Farmer.findOne({ phoneNumber: `+2547${String(randomInt(DOCS)).padStart(8, '0')}` }).lean(),
    );
    show('findOne({ phoneNumber }).lean() — unique index', byPhone);
    const scan = await opsPerSecond(SCANS, () =>
      Farmer.findOne({ unindexedRef: `ID${randomInt(DOCS)}` }).lean(),
    );
    show('findOne({ unindexedRef }).lean() — same values, full scan', scan);
    console.log(
      `end-to-end indexed / full-scan: ${(indexed / scan).toFixed(1)}x (nationalId), ${(byPhone / scan).toFixed(1)}x (phoneNumber)`,
    );
    serverSideLookups(docs);
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
