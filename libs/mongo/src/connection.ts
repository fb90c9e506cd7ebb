import type { Logger } from '@parametric/logger';
import mongoose, { type Connection } from 'mongoose';

export interface MongoOptions {
  url: string;
  dbName: string;
  logger?: Logger;
  serverSelectionTimeoutMS?: number;
}

/** A dedicated connection (never mongoose's global one), ready to use. */
export async function connectMongo({
  url,
  dbName,
  logger,
  serverSelectionTimeoutMS = 10_000,
}: MongoOptions): Promise<Connection> {
  const connection = mongoose.createConnection(url, { dbName, serverSelectionTimeoutMS, autoIndex: true });
  connection.on('disconnected', () => logger?.warn({ dbName }, 'MongoDB disconnected'));
  connection.on('reconnected', () => logger?.info({ dbName }, 'MongoDB reconnected'));
  await connection.asPromise();
  return connection;
}

/** Readiness probe: the connection is open and the server answers a ping (healthRoutes bounds its time). */
export async function pingMongo(connection: Connection): Promise<boolean> {
  const db = connection.db;
  if (!db || connection.readyState !== 1) return false;
  return (await db.command({ ping: 1 })).ok === 1;
}
