import type { Logger } from '@parametric/logger';
import mongoose, { type Connection } from 'mongoose';

export interface MongoOptions {
  url: string;
  dbName: string;
  logger?: Logger;
  serverSelectionTimeoutMS?: number;
  /** How long an operation may wait for MongoDB's answer before it fails (see MONGO_SOCKET_TIMEOUT_MS). */
  socketTimeoutMS?: number;
  /** How long opening a connection may take (a retried operation opens one). */
  connectTimeoutMS?: number;
  /**
   * Whether mongoose builds the schemas' indexes when a model is made. Off in production, where
   * the `migrate` command builds them before a rollout (libs/mongo/src/indexes.ts); on by default.
   */
  autoIndex?: boolean;
}

/**
 * How long an operation may wait for bytes from MongoDB. A server that is down fails at once;
 * one that hangs would otherwise hold each request until it answers (the driver has no
 * client-side operation deadline since `timeoutMS` was removed). Past it the socket is closed
 * and the operation fails, so a request answers 503 instead of hanging.
 */
export const MONGO_SOCKET_TIMEOUT_MS = 10_000;
/** The driver's default is 30 s; a retried read opens a new connection and would wait that long. */
export const MONGO_CONNECT_TIMEOUT_MS = 5_000;

/** A dedicated connection (never mongoose's global one), ready to use. */
export async function connectMongo({
  url,
  dbName,
  logger,
  serverSelectionTimeoutMS = 10_000,
  socketTimeoutMS = MONGO_SOCKET_TIMEOUT_MS,
  connectTimeoutMS = MONGO_CONNECT_TIMEOUT_MS,
  autoIndex = true,
}: MongoOptions): Promise<Connection> {
  const connection = mongoose.createConnection(url, {
    dbName,
    serverSelectionTimeoutMS,
    socketTimeoutMS,
    connectTimeoutMS,
    autoIndex,
    // The platform's MongoDB is a replica set (docs/deploy.md, "MongoDB and Redis"): a write is
    // answered once a majority holds it, so a failover cannot roll back what a partner was told
    // was recorded (a policy, a payment); reads go to the primary, so a read follows the write
    // the same request or the previous one made. Both are the driver's defaults, said here so
    // that a connection string's `w=1` or `readPreference=secondary` cannot weaken them.
    writeConcern: { w: 'majority' },
    readPreference: 'primary',
  });
  // A close we asked for (a stop) is routine; losing the server is what an operator must see.
  let closing = false;
  connection.on('disconnecting', () => {
    closing = true;
  });
  connection.on('disconnected', () => {
    if (closing) logger?.info({ dbName }, 'MongoDB connection closed');
    else logger?.warn({ dbName }, 'MongoDB disconnected');
  });
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
