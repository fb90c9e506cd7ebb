import type mongoose from 'mongoose';
import type { Model, QueryFilter, UpdateQuery } from 'mongoose';
import { castId, findOneLean } from './lean';

type Scoped<T> = QueryFilter<T>;

/**
 * A collection of many documents per organization (farmers, policies, deliveries), bound to
 * one organization: every filter gets the organization added (and it wins over any
 * `organizationId` the caller passed), and no update can move a document to another
 * organization. Another organization's document is indistinguishable from a missing one.
 * Services hand partner handlers only such bindings (see each service's `repositories.ts`);
 * code that must cross organizations says so with `acrossOrganizations`.
 */
export function scopedTo<T extends { organizationId: string }>(model: Model<T>, organizationId: string) {
  const scope = (filter: Scoped<T> = {}) => ({ ...filter, organizationId }) as QueryFilter<T>;
  const guard = (update: UpdateQuery<T>) => assertKeepsOrganization(update);
  return {
    organizationId,
    find: (filter?: Scoped<T>) => model.find(scope(filter)),
    findOne: (filter?: Scoped<T>) => model.findOne(scope(filter)),
    findById: (id: unknown) => model.findOne(scope({ _id: id } as Scoped<T>)),
    /**
     * The document with this id, lean, or null: the driver's read without a mongoose query
     * (`findOneLean`), for the reads on a hot path. An id the `_id` type cannot hold rejects.
     */
    readById: async (id: unknown) => findOneLean(model, scope({ _id: castId(model, id) } as Scoped<T>)),
    countDocuments: (filter?: Scoped<T>) => model.countDocuments(scope(filter)),
    exists: (filter?: Scoped<T>) => model.exists(scope(filter)),
    // async, so a refused update is a rejected promise like any other failed write.
    updateOne: async (filter: Scoped<T>, update: UpdateQuery<T>) =>
      model.updateOne(scope(filter), guard(update)),
    updateMany: async (filter: Scoped<T>, update: UpdateQuery<T>) =>
      model.updateMany(scope(filter), guard(update)),
    findOneAndUpdate: async (
      filter: Scoped<T>,
      update: UpdateQuery<T>,
      options: mongoose.QueryOptions<T> = {},
    ) =>
      model.findOneAndUpdate(scope(filter), guard(update), { returnDocument: 'after', ...options }).lean<T>(),
    /**
     * A page of a list route: the documents matching every given field of `filters` (an
     * undefined one is no filter, so a route passes its optional query filters as parsed),
     * newest first unless `order` says oldest, and how many match. `_id` breaks `createdAt`
     * ties so that pages neither repeat nor skip a document; each list declares an index on
     * `{ organizationId, [filter], createdAt, _id }` to serve it.
     */
    listPage: async (
      filters: Record<string, unknown>,
      paging: { page: number; limit: number },
      order: 'newestFirst' | 'oldestFirst' = 'newestFirst',
    ) => {
      const given = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined));
      const filter = scope(given as Scoped<T>);
      const direction = order === 'newestFirst' ? -1 : 1;
      const [items, total] = await Promise.all([
        model
          .find(filter)
          .sort({ createdAt: direction, _id: direction })
          .skip((paging.page - 1) * paging.limit)
          .limit(paging.limit)
          .lean<T[]>(),
        model.countDocuments(filter),
      ]);
      return { items, total };
    },
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

/**
 * A collection with one document per organization, whose `_id` is the organization id
 * (capacity, webhook endpoint, API key, the organization itself), bound to one organization:
 * every filter is `_id: organizationId` plus what the caller adds.
 */
export function organizationDocument<T extends { _id: string }>(model: Model<T>, organizationId: string) {
  const own = (filter: QueryFilter<T> = {}) => ({ ...filter, _id: organizationId }) as QueryFilter<T>;
  return {
    organizationId,
    get: () => model.findOne(own()).lean<T>(),
    exists: (filter?: QueryFilter<T>) => model.exists(own(filter)),
    findOneAndUpdate: (
      filter: QueryFilter<T>,
      update: UpdateQuery<T>,
      options: mongoose.QueryOptions<T> = {},
    ) => model.findOneAndUpdate(own(filter), update, { returnDocument: 'after', ...options }).lean<T>(),
    updateOne: (filter: QueryFilter<T>, update: UpdateQuery<T>) => model.updateOne(own(filter), update),
    /** Creates or updates the organization's document. */
    upsert: (update: UpdateQuery<T>, options: mongoose.QueryOptions<T> = {}) =>
      model
        .findOneAndUpdate(own(), update, {
          upsert: true,
          returnDocument: 'after',
          setDefaultsOnInsert: true,
          ...options,
        })
        .lean<T>(),
  };
}

export type OrganizationDocument<T extends { _id: string }> = ReturnType<typeof organizationDocument<T>>;

/**
 * The explicit door across organizations, for the platform's own work (sweeps, relays,
 * authentication by key, ops actions): the unscoped model, under a name a reviewer can grep
 * for. Partner request handlers never receive it.
 */
export function acrossOrganizations<T>(model: Model<T>): Model<T> {
  return model;
}
