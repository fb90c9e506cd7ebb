import { createLogger } from '@parametric/logger';
import { parseExposition } from '@parametric/metrics';
import type { IndexedModel } from '@parametric/mongo';
import {
  captureLogs,
  eventually,
  testMongoUrl,
  testRedisUrl,
  uniqueDatabaseName,
  uniqueRedisPrefix,
} from '@parametric/test-harness';
import mongoose, { type Connection, Schema } from 'mongoose';
import { migrate, type PlatformConfig, type ServiceDeclaration, startService } from '../src';

const receipts = new Schema({ organizationId: String, reference: String });
receipts.index({ organizationId: 1, reference: 1 }, { unique: true });
const receiptModels = (connection: Connection): IndexedModel[] => [
  connection.models.Receipt ?? connection.model('Receipt', receipts, 'receipts'),
];

/** A service with one unique index and a cache it serves without (`cacheUp` says whether it answers). */
function service(cache: {
  up: boolean;
}): ServiceDeclaration<PlatformConfig, { init(): Promise<unknown> }, never, object> {
  return {
    name: 'webhooks',
    repositories: (connection) => ({
      init: () => Promise.all(receiptModels(connection).map((m) => m.init())),
    }),
    models: receiptModels,
    produces: [],
    queueStats: [],
    build: () => ({
      api: { port: 0, host: '127.0.0.1' },
      degradesAround: { cache: async () => cache.up },
    }),
  };
}

const config = (overrides: Partial<PlatformConfig> = {}): PlatformConfig => ({
  MONGO_URL: testMongoUrl(),
  MONGO_DB: uniqueDatabaseName('runtime_ready'),
  REDIS_URL: testRedisUrl(),
  REDIS_PREFIX: uniqueRedisPrefix('runtime_ready'),
  INTERNAL_SIGNING_SECRET: 'a-test-signing-secret-of-32-chars',
  REQUEST_DEADLINE_MS: 5_000,
  OPS_REQUEST_DEADLINE_MS: 5_000,
  RUN_WORKERS: false,
  ...overrides,
});

const readiness = async (url: string) => {
  const res = await fetch(`${url}/readyz`);
  return [res.status, await res.json()];
};

const indexesOf = async (settings: PlatformConfig) => {
  const db = await mongoose.createConnection(settings.MONGO_URL, { dbName: settings.MONGO_DB }).asPromise();
  try {
    return (await db.collection('receipts').listIndexes().toArray()).map((index) => index.name).sort();
  } catch {
    return [];
  } finally {
    await db.close();
  }
};

describe('readiness', () => {
  it('in production builds no index, stays not ready with one log line naming the missing unique index, and is ready once migrate has run', async () => {
    const settings = config({ NODE_ENV: 'production', INDEX_RECHECK_MS: 100 });
    const logs = captureLogs();
    const logger = createLogger({ name: 'ready-test', level: 'info', destination: logs.destination });
    const running = await startService(service({ up: true }), settings, logger);
    const url = running.listener('api').url;
    try {
      expect(await readiness(url)).toEqual([
        503,
        { status: 'not ready', checks: { mongo: true, indexes: false }, degraded: [] },
      ]);
      expect(await indexesOf(settings)).not.toContain('organizationId_1_reference_1');
      const indexLines = () =>
        logs.records().filter((record) => String(record.msg).startsWith('unique index missing'));
      expect(indexLines()).toHaveLength(1);
      expect(indexLines()[0]).toMatchObject({ level: 50 });
      expect(indexLines()[0]?.msg).toContain('unique index missing: receipts.organizationId_1_reference_1');

      const report = await migrate({ name: 'webhooks', models: receiptModels }, settings, logger);
      expect(report.created.map((index) => index.name)).toEqual(['organizationId_1_reference_1']);
      await eventually(async () =>
        expect(await readiness(url)).toEqual([
          200,
          { status: 'ready', checks: { mongo: true, indexes: true }, degraded: [] },
        ]),
      );
      expect(logs.records().map((record) => record.msg)).toContain('unique indexes present: ready');
      // The re-checks logged the same missing index once, not once per look.
      expect(indexLines()).toHaveLength(1);

      const again = await migrate({ name: 'webhooks', models: receiptModels }, settings, logger);
      expect([again.created, again.conflicts, again.present.length]).toEqual([[], [], 1]);
      expect(await indexesOf(settings)).toEqual(['_id_', 'organizationId_1_reference_1']);
    } finally {
      await running.stop();
    }
  });

  it('outside production builds the indexes at start and is ready at once', async () => {
    const settings = config({ NODE_ENV: 'test' });
    const running = await startService(
      service({ up: true }),
      settings,
      createLogger({ name: 't', level: 'silent' }),
    );
    try {
      expect(await readiness(running.listener('api').url)).toEqual([
        200,
        { status: 'ready', checks: { mongo: true }, degraded: [] },
      ]);
      expect(await indexesOf(settings)).toEqual(['_id_', 'organizationId_1_reference_1']);
    } finally {
      await running.stop();
    }
  });

  it('a dependency the service degrades around leaves it ready, listed in /readyz and as dependency_degraded 1', async () => {
    const cache = { up: true };
    const running = await startService(
      service(cache),
      config(),
      createLogger({ name: 't', level: 'silent' }),
    );
    const url = running.listener('api').url;
    const degraded = async () =>
      parseExposition(await (await fetch(`${url}/metrics`)).text()).find(
        (sample) => sample.name === 'dependency_degraded' && sample.labels.dependency === 'cache',
      )?.value;
    try {
      expect(await degraded()).toBe(0);
      cache.up = false;
      expect(await readiness(url)).toEqual([
        200,
        { status: 'ready', checks: { mongo: true }, degraded: ['cache'] },
      ]);
      expect(await degraded()).toBe(1);
    } finally {
      await running.stop();
    }
  });
});
