import { randomBytes } from 'node:crypto';
import { type Db, MongoClient } from 'mongodb';
import mongoose from 'mongoose';
import { publishedServer } from './servers';

/** The run's MongoDB URL, set by the jest globalSetup. */
export function testMongoUrl(): string {
  return publishedServer('TEST_MONGO_URL', 'MongoDB');
}

/** `embedded`, `mongod` or `external`: which server the run talks to. */
export function testMongoBackend(): string {
  return process.env.TEST_MONGO_BACKEND ?? 'unknown';
}

/** A database name no other test file uses (MongoDB allows 63 bytes, no dots). */
export function uniqueDatabaseName(label = 'test'): string {
  const worker = process.env.JEST_WORKER_ID ?? '0';
  const clean = label.replace(/[^a-zA-Z0-9_]/g, '_').slice(0, 30);
  return `t${worker}_${clean}_${randomBytes(4).toString('hex')}`;
}

export interface DriverHandle {
  client: MongoClient;
  db: Db;
  /** Drops the database and closes the client. */
  close(): Promise<void>;
}

/** A raw-driver client on a fresh database. */
export async function connectDriver(label?: string): Promise<DriverHandle> {
  const client = await MongoClient.connect(testMongoUrl(), { serverSelectionTimeoutMS: 10_000 });
  const db = client.db(uniqueDatabaseName(label));
  return {
    client,
    db,
    close: async () => {
      await db.dropDatabase().catch(() => undefined);
      await client.close();
    },
  };
}

export interface MongooseHandle {
  connection: mongoose.Connection;
  /** Drops the database and closes the connection. */
  close(): Promise<void>;
}

/** A dedicated mongoose connection (not the global one) on a fresh database. */
export async function connectMongoose(label?: string): Promise<MongooseHandle> {
  const connection = mongoose.createConnection(testMongoUrl(), {
    dbName: uniqueDatabaseName(label),
    serverSelectionTimeoutMS: 10_000,
  });
  await connection.asPromise();
  return {
    connection,
    close: async () => {
      await connection.dropDatabase().catch(() => undefined);
      await connection.close();
    },
  };
}
