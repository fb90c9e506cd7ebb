import type { Logger } from '@parametric/logger';
import mongoose, { type Connection, type Model, type QueryFilter, type UpdateQuery } from 'mongoose';

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

type Scoped<T> = QueryFilter<T>;

/**
 * The only way service code reads or writes tenant data: every filter gets the calling
 * organization added (and it wins over any `organizationId` the caller passed), so a
 * cross-tenant read or write cannot be written by accident. Another organization's
 * document is indistinguishable from a missing one.
 */
export function scopedTo<T extends { organizationId: string }>(model: Model<T>, organizationId: string) {
  const scope = (filter: Scoped<T> = {}) => ({ ...filter, organizationId }) as QueryFilter<T>;
  const guard = (update: UpdateQuery<T>) => assertKeepsOrganization(update);
  return {
    organizationId,
    find: (filter?: Scoped<T>) => model.find(scope(filter)),
    findOne: (filter?: Scoped<T>) => model.findOne(scope(filter)),
    findById: (id: unknown) => model.findOne(scope({ _id: id } as Scoped<T>)),
    countDocuments: (filter?: Scoped<T>) => model.countDocuments(scope(filter)),
    exists: (filter?: Scoped<T>) => model.exists(scope(filter)),
    // async, so a refused update is a rejected promise like any other failed write.
    updateOne: async (filter: Scoped<T>, update: UpdateQuery<T>) =>
      model.updateOne(scope(filter), guard(update)),
    findOneAndUpdate: async (
      filter: Scoped<T>,
      update: UpdateQuery<T>,
      options: mongoose.QueryOptions<T> = {},
    ) =>
      model.findOneAndUpdate(scope(filter), guard(update), { returnDocument: 'after', ...options }).lean<T>(),
    deleteOne: (filter: Scoped<T>) => model.deleteOne(scope(filter)),
    create: (doc: Omit<Partial<T>, 'organizationId'>) =>
      model.create({ ...doc, organizationId } as Partial<T>),
  };
}

/**
 * Refuses an update that would move a document to another organization (a `$set`,
 * `$rename` or replacement touching `organizationId`), or a pipeline update that could.
 */
function assertKeepsOrganization<U>(update: U): U {
  if (Array.isArray(update)) throw new Error('pipeline updates are not allowed through a tenant scope');
  for (const [key, value] of Object.entries(update as Record<string, unknown>)) {
    if (key === 'organizationId') throw new Error('organizationId cannot be changed through a tenant scope');
    if (!key.startsWith('$') || value === null || typeof value !== 'object') continue;
    const fields = value as Record<string, unknown>;
    if (
      'organizationId' in fields ||
      (key === '$rename' && Object.values(fields).includes('organizationId'))
    ) {
      throw new Error('organizationId cannot be changed through a tenant scope');
    }
  }
  return update;
}

export type TenantScope<T extends { organizationId: string }> = ReturnType<typeof scopedTo<T>>;
