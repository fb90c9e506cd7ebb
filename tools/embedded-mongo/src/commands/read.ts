import { type Document, Long, ObjectId } from 'bson';
import { MongoCommandError } from '../errors';
import { type FindOptions, matchingDocs, runAggregate, runFind, validatePipeline } from '../query';
import { validateCollectionName } from '../store/catalog';
import { isPlainObject, keyOf, valuesAtPath } from '../store/values';
import { encodeCursorReply } from '../wire/encoded';
import { type CommandHandler, nonNegative, optionalNumber, targetCollection } from './context';

/** A find command's sort, skip, limit and projection, checked as mongod checks them. */
export function findOptions(body: Document): FindOptions & { singleBatch: boolean } {
  const skip = nonNegative(optionalNumber(body, 'skip', 'find'), 'skip');
  const rawLimit = optionalNumber(body, 'limit', 'find');
  // A negative limit is the legacy spelling of "one batch of at most |limit|".
  const limit = rawLimit === undefined || rawLimit === 0 ? undefined : Math.abs(rawLimit);
  const singleBatch = body.singleBatch === true || (rawLimit !== undefined && rawLimit < 0);
  return { sort: body.sort, skip, limit, projection: body.projection, singleBatch };
}

const find: CommandHandler = (body, ctx) => {
  const name = targetCollection(body, 'find', ctx);
  const { singleBatch, ...options } = findOptions(body);
  const batchSize = nonNegative(optionalNumber(body, 'batchSize', 'find'), 'batchSize');
  const collection = ctx.state.catalog.get(ctx.db, name);
  const docs = runFind(collection, body.filter, options);
  const ns = `${ctx.db}.${name}`;
  const { batch, id } = ctx.state.cursors.open(ns, docs, batchSize, singleBatch);
  return encodeCursorReply('firstBatch', batch, id, ns);
};

const getMore: CommandHandler = (body, ctx) => {
  const rawId = body.getMore;
  if (!(rawId instanceof Long) && typeof rawId !== 'number') {
    throw new MongoCommandError(
      'TypeMismatch',
      "BSON field 'getMore.getMore' is the wrong type, expected type 'long'",
    );
  }
  const name = validateCollectionName(ctx.db, body.collection);
  const batchSize = nonNegative(optionalNumber(body, 'batchSize', 'getMore'), 'batchSize');
  const ns = `${ctx.db}.${name}`;
  const { batch, id } = ctx.state.cursors.getMore(Long.fromValue(rawId), ns, batchSize || undefined);
  return encodeCursorReply('nextBatch', batch, id, ns);
};

const killCursors: CommandHandler = (body, ctx) => {
  targetCollection(body, 'killCursors', ctx);
  const ids = body.cursors;
  if (!Array.isArray(ids)) {
    throw new MongoCommandError(
      'TypeMismatch',
      "BSON field 'killCursors.cursors' is the wrong type, expected type 'array'",
    );
  }
  const { killed, notFound } = ctx.state.cursors.kill(ids.map((id) => Long.fromValue(id)));
  return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 };
};

const count: CommandHandler = (body, ctx) => {
  const name = targetCollection(body, 'count', ctx);
  const collection = ctx.state.catalog.get(ctx.db, name);
  const skip = nonNegative(optionalNumber(body, 'skip', 'count'), 'skip') ?? 0;
  const limit = Math.abs(optionalNumber(body, 'limit', 'count') ?? 0);
  const query = body.query ?? {};
  let n =
    isPlainObject(query) && Object.keys(query).length === 0
      ? (collection?.count ?? 0)
      : matchingDocs(collection, query).length;
  n = Math.max(0, n - skip);
  if (limit > 0) n = Math.min(n, limit);
  return { n, ok: 1 };
};

const distinct: CommandHandler = (body, ctx) => {
  const name = targetCollection(body, 'distinct', ctx);
  if (typeof body.key !== 'string' || body.key.length === 0) {
    throw new MongoCommandError(
      'TypeMismatch',
      "BSON field 'distinct.key' is the wrong type, expected type 'string'",
    );
  }
  const collection = ctx.state.catalog.get(ctx.db, name);
  const parts = body.key.split('.');
  const seen = new Map<string, unknown>();
  for (const doc of matchingDocs(collection, body.query ?? {})) {
    for (const value of valuesAtPath(doc, parts)) {
      for (const item of Array.isArray(value) ? value : [value]) {
        if (item === undefined) continue;
        const key = keyOf(item);
        if (!seen.has(key)) seen.set(key, item);
      }
    }
  }
  return { values: [...seen.values()], ok: 1 };
};

const aggregate: CommandHandler = (body, ctx) => {
  const target = body.aggregate;
  const pipeline = validatePipeline(body.pipeline);
  if (!isPlainObject(body.cursor) && body.explain !== true) {
    throw new MongoCommandError(
      'FailedToParse',
      "The 'cursor' option is required, except for aggregate with the explain argument",
    );
  }
  let name: string | undefined;
  if (target === 1) {
    if (!pipeline[0] || !('$documents' in pipeline[0])) {
      throw new MongoCommandError(
        'InvalidNamespace',
        "{aggregate: 1} is not valid for '$match'; a collection is required.",
      );
    }
  } else {
    name = targetCollection(body, 'aggregate', ctx);
  }
  const { catalog } = ctx.state;
  const collection = name === undefined ? undefined : catalog.get(ctx.db, name);
  const last = pipeline[pipeline.length - 1];
  const out = last && '$out' in last ? outTarget(last.$out, ctx.db) : undefined;
  const docs = runAggregate(
    collection,
    out ? pipeline.slice(0, -1) : pipeline,
    (other) => catalog.get(ctx.db, other)?.all() ?? [],
    isPlainObject(body.let) ? body.let : undefined,
  );
  if (out) {
    catalog.replaceContents(
      out.db,
      out.coll,
      docs.map((doc) => ('_id' in doc ? doc : { _id: new ObjectId(), ...doc })),
    );
    return encodeCursorReply('firstBatch', [], Long.ZERO, `${ctx.db}.${name ?? '$cmd.aggregate'}`);
  }
  const batchSize = isPlainObject(body.cursor)
    ? nonNegative(optionalNumber(body.cursor, 'batchSize', 'aggregate.cursor'), 'batchSize')
    : undefined;
  const ns = `${ctx.db}.${name ?? '$cmd.aggregate'}`;
  const { batch, id } = ctx.state.cursors.open(ns, docs, batchSize);
  return encodeCursorReply('firstBatch', batch, id, ns);
};

function outTarget(spec: unknown, db: string): { db: string; coll: string } {
  if (typeof spec === 'string') return { db, coll: spec };
  if (isPlainObject(spec) && typeof spec.coll === 'string') {
    return { db: typeof spec.db === 'string' ? spec.db : db, coll: spec.coll };
  }
  throw new MongoCommandError(
    'FailedToParse',
    '$out only supports a string or object argument with db and coll',
  );
}

export const readCommands: Record<string, CommandHandler> = {
  find,
  getMore,
  killCursors,
  count,
  distinct,
  aggregate,
};
