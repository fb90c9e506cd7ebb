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
  stop(): Promise<void>;
}

export const EMBEDDED_MONGOD_BIN = path.resolve(__dirname, '..', 'bin', 'embedded-mongod.js');

/**
 * Picks the MongoDB backend: `MONGO_URL` when set (nothing is started), otherwise a real
 * `mongod` through mongodb-memory-server when one can be had without a download
 * (`MONGOMS_SYSTEM_BINARY`, or its binary cache; a download only when
 * `MONGOMS_RUNTIME_DOWNLOAD=true` is set explicitly), otherwise our embedded server,
 * started by mongodb-memory-server through `systemBinary` exactly like a `mongod`.
 */
export async function startLocalMongo(env: NodeJS.ProcessEnv = process.env): Promise<LocalMongo> {
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
  const realBinary = await DryMongoBinary.locateBinary(await DryMongoBinary.generateOptions());
  if (realBinary || env.MONGOMS_RUNTIME_DOWNLOAD === 'true') {
    const server = await MongoMemoryServer.create({ instance: { ip: '127.0.0.1' } });
    return {
      url: server.getUri(),
      kind: 'mongod',
      description: `real mongod via mongodb-memory-server (${realBinary ?? 'downloaded binary'}) at ${server.getUri()}`,
      stop: async () => {
        await server.stop({ doCleanup: true, force: true });
      },
    };
  }

  const server = await MongoMemoryServer.create({
    instance: { ip: '127.0.0.1' },
    binary: { systemBinary: EMBEDDED_MONGOD_BIN, version: EMBEDDED_MONGOD_VERSION },
  });
  return {
    url: server.getUri(),
    kind: 'embedded',
    description: `embedded-mongod ${EMBEDDED_MONGOD_VERSION} (in-memory MongoDB-wire server, no mongod found) at ${server.getUri()}`,
    stop: async () => {
      await server.stop({ doCleanup: true, force: true });
    },
  };
}

function redactCredentials(url: string): string {
  return url.replace(/\/\/[^@/]+@/, '//***@');
}
