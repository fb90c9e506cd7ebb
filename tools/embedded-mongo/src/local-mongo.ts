import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DryMongoBinary, MongoMemoryServer } from 'mongodb-memory-server';
import { EMBEDDED_MONGOD_VERSION } from './version';

/** A MongoDB server for tests and local runs, and how to stop it. */
export interface LocalMongo {
  /** Connection string without a database name, e.g. `mongodb://127.0.0.1:41234/`. */
  url: string;
  /** One human line naming the backend, for logs. */
  description: string;
  kind: 'external' | 'mongod' | 'embedded';
  /** The server process we started (mongod or embedded-mongod); undefined for `external`. */
  pid?: number;
  stop(): Promise<void>;
}

export interface LocalMongoOptions {
  /**
   * Keep the data in this directory (created if missing) across restarts. A real mongod
   * simply uses it as its dbpath; the embedded server is started with `--persist`. `stop()`
   * never removes it. Ignored when `MONGO_URL` is set.
   */
  dataDir?: string;
}

export const EMBEDDED_MONGOD_BIN = path.resolve(__dirname, '..', 'bin', 'embedded-mongod.js');

/**
 * Picks the MongoDB backend: `MONGO_URL` when set (nothing is started), otherwise a real
 * `mongod` through mongodb-memory-server when one can be had without a download
 * (`MONGOMS_SYSTEM_BINARY`, or its binary cache; a download only when
 * `MONGOMS_RUNTIME_DOWNLOAD=true` is set explicitly), otherwise our embedded server,
 * started by mongodb-memory-server through `systemBinary` exactly like a `mongod`.
 */
export async function startLocalMongo(
  env: NodeJS.ProcessEnv = process.env,
  options: LocalMongoOptions = {},
): Promise<LocalMongo> {
  const external = env.MONGO_URL;
  if (external) {
    return {
      url: external,
      kind: 'external',
      description: `external MongoDB at MONGO_URL (${redactCredentials(external)})`,
      stop: async () => {},
    };
  }

  // mongodb-memory-server downloads by default; our machines and CI have no route to the
  // download host, so a download happens only when asked for explicitly.
  const { dataDir } = options;
  if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true });
  // With a dataDir, mongodb-memory-server must not clean up: `force: true` would delete
  // the dbPath itself (it only spares a dbPath it did not create when force is off).
  const stopOptions = dataDir === undefined ? { doCleanup: true, force: true } : { doCleanup: false };

  const realBinary = await DryMongoBinary.locateBinary(await DryMongoBinary.generateOptions());
  if (realBinary || env.MONGOMS_RUNTIME_DOWNLOAD === 'true') {
    const server = await createOnFreePort({
      instance: { ip: '127.0.0.1', ...(dataDir === undefined ? {} : { dbPath: dataDir }) },
    });
    return {
      url: server.getUri(),
      kind: 'mongod',
      pid: server.instanceInfo?.instance.mongodProcess?.pid,
      description: `real mongod via mongodb-memory-server (${realBinary ?? 'downloaded binary'}) at ${server.getUri()}${dataDir === undefined ? '' : `, data in ${dataDir}`}`,
      stop: async () => {
        await server.stop(stopOptions);
      },
    };
  }

  const server = await createOnFreePort({
    instance: {
      ip: '127.0.0.1',
      ...(dataDir === undefined ? {} : { dbPath: dataDir, args: ['--persist'] }),
    },
    binary: { systemBinary: EMBEDDED_MONGOD_BIN, version: EMBEDDED_MONGOD_VERSION },
  });
  const storage = dataDir === undefined ? 'in-memory' : `data kept in ${dataDir}`;
  return {
    url: server.getUri(),
    kind: 'embedded',
    pid: server.instanceInfo?.instance.mongodProcess?.pid,
    description: `embedded-mongod ${EMBEDDED_MONGOD_VERSION} (MongoDB-wire server, ${storage}, no mongod found) at ${server.getUri()}`,
    stop: async () => {
      await server.stop(stopOptions);
    },
  };
}

/**
 * mongodb-memory-server picks a free port and then starts the server on it; another process can
 * take the port in between (a busy machine, tests starting servers side by side), and the start
 * fails with "already in use". Then it tries again on another port, as the local Redis and
 * chain do.
 */
async function createOnFreePort(
  options: Parameters<typeof MongoMemoryServer.create>[0],
): Promise<MongoMemoryServer> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await MongoMemoryServer.create(options);
    } catch (err) {
      if (attempt >= 4 || !/already in use/i.test(err instanceof Error ? err.message : String(err)))
        throw err;
    }
  }
}

function redactCredentials(url: string): string {
  return url.replace(/\/\/[^@/]+@/, '//***@');
}
