import type { Document } from 'bson';
import { MongoCommandError } from '../errors';
import { MINGO_COMPILED, Query } from '../mingo/context';
import { validateCollectionName, validateDatabaseName } from '../store/catalog';
import type { Collection } from '../store/collection';
import { isPlainObject, keyOf, optionNumber } from '../store/values';
import { encodeCursorReply } from '../wire/encoded';
import { type CommandContext, type CommandHandler, targetCollection } from './context';

const COLLECTION_OPTION_FIELDS = new Set([
  'capped',
  'size',
  'max',
  'validator',
  'validationLevel',
  'validationAction',
  'collation',
  'timeseries',
  'expireAfterSeconds',
  'clusteredIndex',
  'changeStreamPreAndPostImages',
]);

const create: CommandHandler = (body, ctx) => {
  const name = targetCollection(body, 'create', ctx);
  const options: Document = {};
  for (const [k, v] of Object.entries(body)) if (COLLECTION_OPTION_FIELDS.has(k)) options[k] = v;
  // Since 7.0, creating an existing collection with identical options succeeds.
  const existing = ctx.state.catalog.get(ctx.db, name);
  if (existing && keyOf(existing.options) === keyOf(options)) return { ok: 1 };
  if (existing) {
    throw new MongoCommandError(
      'NamespaceExists',
      `namespace ${existing.ns} already exists, but with different options: ${JSON.stringify(existing.options)}`,
    );
  }
  ctx.state.catalog.create(ctx.db, name, options);
  return { ok: 1 };
};

const drop: CommandHandler = (body, ctx) => {
  const name = targetCollection(body, 'drop', ctx);
  const dropped = ctx.state.catalog.drop(ctx.db, name);
  // Since 7.0 dropping a collection that does not exist succeeds.
  return dropped ? { nIndexesWas: dropped.indexCount, ns: dropped.ns, ok: 1 } : { ok: 1 };
};

function describe(collection: Collection): Document {
  return {
    name: collection.name,
    type: 'collection',
    options: collection.options,
    info: { readOnly: false, uuid: collection.uuid },
    idIndex: { v: 2, key: { _id: 1 }, name: '_id_' },
  };
}

const listCollections: CommandHandler = (body, ctx) => {
  validateDatabaseName(ctx.db);
  let entries = ctx.state.catalog.collections(ctx.db).map(describe);
  if (isPlainObject(body.filter) && Object.keys(body.filter).length > 0) {
    const query = new Query(body.filter, MINGO_COMPILED);
    entries = entries.filter((e) => query.test(e));
  }
  if (body.nameOnly === true) entries = entries.map(({ name, type }) => ({ name, type }));
  const ns = `${ctx.db}.$cmd.listCollections`;
  const batchSize =
    isPlainObject(body.cursor) && typeof body.cursor.batchSize === 'number'
      ? body.cursor.batchSize
      : undefined;
  const { batch, id } = ctx.state.cursors.open(ns, entries, batchSize);
  return encodeCursorReply('firstBatch', batch, id, ns);
};

const createIndexes: CommandHandler = (body, ctx) => {
  const name = targetCollection(body, 'createIndexes', ctx);
  if (!Array.isArray(body.indexes) || body.indexes.length === 0) {
    throw new MongoCommandError('BadValue', 'Must specify at least one index to create');
  }
  const { collection, created } = ctx.state.catalog.getOrCreate(ctx.db, name);
  const numIndexesBefore = collection.indexCount;
  for (const spec of body.indexes) collection.createIndex(spec);
  const reply: Document = {
    numIndexesBefore,
    numIndexesAfter: collection.indexCount,
    createdCollectionAutomatically: created,
    ok: 1,
  };
  if (collection.indexCount === numIndexesBefore) reply.note = 'all indexes already exist';
  return reply;
};

function existingCollection(body: Document, command: string, ctx: CommandContext): Collection {
  const name = targetCollection(body, command, ctx);
  const collection = ctx.state.catalog.get(ctx.db, name);
  if (!collection) throw new MongoCommandError('NamespaceNotFound', `ns does not exist: ${ctx.db}.${name}`);
  return collection;
}

const listIndexes: CommandHandler = (body, ctx) => {
  const collection = existingCollection(body, 'listIndexes', ctx);
  const batchSize =
    isPlainObject(body.cursor) && typeof body.cursor.batchSize === 'number'
      ? body.cursor.batchSize
      : undefined;
  const { batch, id } = ctx.state.cursors.open(collection.ns, collection.indexSpecs(), batchSize);
  return encodeCursorReply('firstBatch', batch, id, collection.ns);
};

const dropIndexes: CommandHandler = (body, ctx) => {
  const name = targetCollection(body, 'dropIndexes', ctx);
  const collection = ctx.state.catalog.get(ctx.db, name);
  if (!collection) throw new MongoCommandError('NamespaceNotFound', `ns not found ${ctx.db}.${name}`);
  const nIndexesWas = collection.indexCount;
  const target = body.index;
  if (target === '*') {
    collection.dropAllIndexes();
    return { nIndexesWas, msg: 'non-_id indexes dropped for collection', ok: 1 };
  }
  const targets = Array.isArray(target) ? target : [target];
  // Resolve every name first so that a bad one drops nothing.
  const resolved = targets.map((t) => {
    if (collection.isIdIndex(t)) throw new MongoCommandError('InvalidOptions', 'cannot drop _id index');
    const index = collection.findIndex(t);
    if (!index) {
      const shown = typeof t === 'string' ? t : JSON.stringify(t);
      const message =
        typeof t === 'string'
          ? `index not found with name [${shown}]`
          : `can't find index with key: ${shown}`;
      throw new MongoCommandError('IndexNotFound', message);
    }
    return index.name;
  });
  for (const indexName of resolved) collection.dropIndex(indexName);
  return { nIndexesWas, ok: 1 };
};

/** collMod: only changing a TTL index's expireAfterSeconds is meaningful here. */
const collMod: CommandHandler = (body, ctx) => {
  const collection = existingCollection(body, 'collMod', ctx);
  const reply: Document = { ok: 1 };
  if (isPlainObject(body.index)) {
    const wanted = body.index.name ?? body.index.keyPattern;
    const index = collection.findIndex(wanted);
    if (!index)
      throw new MongoCommandError(
        'IndexNotFound',
        `cannot find index ${JSON.stringify(wanted)} for ns ${collection.ns}`,
      );
    const ttl = optionNumber(body.index.expireAfterSeconds);
    if (ttl !== undefined) {
      if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 0) {
        throw new MongoCommandError('BadValue', 'expireAfterSeconds must be a non-negative integer');
      }
      reply.expireAfterSeconds_old = collection.setExpireAfterSeconds(index.name, ttl);
      reply.expireAfterSeconds_new = ttl;
    }
  }
  return reply;
};

const renameCollection: CommandHandler = (body, ctx) => {
  if (ctx.db !== 'admin') {
    throw new MongoCommandError(
      'Unauthorized',
      'renameCollection may only be run against the admin database.',
    );
  }
  const split = (ns: unknown): [string, string] => {
    if (typeof ns !== 'string' || !ns.includes('.'))
      throw new MongoCommandError('InvalidNamespace', `Invalid namespace specified '${String(ns)}'`);
    const dot = ns.indexOf('.');
    const db = validateDatabaseName(ns.slice(0, dot));
    return [db, validateCollectionName(db, ns.slice(dot + 1))];
  };
  const [fromDb, from] = split(body.renameCollection);
  const [toDb, to] = split(body.to);
  ctx.state.catalog.rename(fromDb, from, toDb, to, body.dropTarget === true);
  return { ok: 1 };
};

export const ddlCommands: Record<string, CommandHandler> = {
  create,
  drop,
  listCollections,
  createIndexes,
  listIndexes,
  dropIndexes,
  deleteIndexes: dropIndexes,
  collMod,
  renameCollection,
};
