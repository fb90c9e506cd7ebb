import { type Document, ObjectId } from 'bson';
import { MongoCommandError } from '../errors';
import { matchingDocs, project, runFind } from '../query';
import { type Doc, isPlainObject, optionNumber, withIdFirst } from '../store/values';
import { applyUpdate, buildUpsertDocument, classifyUpdate } from '../update';
import { arrayArgument, type CommandHandler, targetCollection } from './context';

/** Runs each statement; an ordered batch stops at its first failure, an unordered one carries on. */
function runStatements<T>(
  statements: T[],
  ordered: boolean,
  run: (statement: T, index: number) => void,
): Document[] {
  const writeErrors: Document[] = [];
  for (let index = 0; index < statements.length; index++) {
    try {
      run(statements[index] as T, index);
    } catch (err) {
      writeErrors.push(toCommandError(err).toWriteError(index));
      if (ordered) break;
    }
  }
  return writeErrors;
}

function toCommandError(err: unknown): MongoCommandError {
  if (err instanceof MongoCommandError) return err;
  return new MongoCommandError('InternalError', err instanceof Error ? err.message : String(err));
}

function withWriteErrors(reply: Document, writeErrors: Document[]): Document {
  return writeErrors.length > 0 ? { ...reply, writeErrors, ok: 1 } : { ...reply, ok: 1 };
}

function prepareInsert(raw: unknown): Doc {
  if (!isPlainObject(raw)) throw new MongoCommandError('TypeMismatch', 'documents to insert must be objects');
  if (Array.isArray(raw._id)) throw new MongoCommandError('BadValue', "can't use an array for _id");
  if (raw._id instanceof RegExp) throw new MongoCommandError('BadValue', "can't use a regex for _id");
  if (raw._id === undefined) return { _id: new ObjectId(), ...raw };
  return withIdFirst(raw);
}

const insert: CommandHandler = (body, ctx) => {
  const name = targetCollection(body, 'insert', ctx);
  const documents = arrayArgument(body, 'documents', 'insert', ctx);
  const { collection } = ctx.state.catalog.getOrCreate(ctx.db, name);
  let n = 0;
  const writeErrors = runStatements(documents, body.ordered !== false, (raw) => {
    collection.insert(prepareInsert(raw));
    n++;
  });
  return withWriteErrors({ n }, writeErrors);
};

const update: CommandHandler = (body, ctx) => {
  const name = targetCollection(body, 'update', ctx);
  const statements = arrayArgument(body, 'updates', 'update', ctx);
  const { catalog } = ctx.state;
  let n = 0;
  let nModified = 0;
  const upserted: Document[] = [];
  const writeErrors = runStatements(statements, body.ordered !== false, (statement, index) => {
    if (!isPlainObject(statement))
      throw new MongoCommandError('TypeMismatch', 'update statements must be objects');
    const { q = {}, u, multi = false, upsert = false, arrayFilters } = statement;
    const kind = classifyUpdate(u);
    if (multi && kind === 'replacement') {
      throw new MongoCommandError(
        'FailedToParse',
        'multi update is not supported for replacement-style update',
      );
    }
    const collection = catalog.get(ctx.db, name);
    const matches = matchingDocs(collection, q);
    const targets = multi ? matches : matches.slice(0, 1);
    for (const current of targets) {
      const next = applyUpdate(current, u, { arrayFilters, filter: q });
      if (next.changed) {
        collection?.replace(current, next.doc);
        nModified++;
      }
      n++;
    }
    if (targets.length === 0 && upsert) {
      const doc = buildUpsertDocument(q, u, arrayFilters);
      catalog.getOrCreate(ctx.db, name).collection.insert(doc);
      upserted.push({ index, _id: doc._id });
      n++;
    }
  });
  const reply: Document = { n, nModified };
  if (upserted.length > 0) reply.upserted = upserted;
  return withWriteErrors(reply, writeErrors);
};

const remove: CommandHandler = (body, ctx) => {
  const name = targetCollection(body, 'delete', ctx);
  const statements = arrayArgument(body, 'deletes', 'delete', ctx);
  let n = 0;
  const writeErrors = runStatements(statements, body.ordered !== false, (statement) => {
    if (!isPlainObject(statement))
      throw new MongoCommandError('TypeMismatch', 'delete statements must be objects');
    const { q = {} } = statement;
    const limit = optionNumber(statement.limit);
    if (limit !== 0 && limit !== 1) {
      throw new MongoCommandError(
        'FailedToParse',
        `The limit field in delete objects must be 0 or 1. Got ${limit}`,
      );
    }
    const collection = ctx.state.catalog.get(ctx.db, name);
    const matches = matchingDocs(collection, q);
    for (const doc of limit === 1 ? matches.slice(0, 1) : matches) {
      collection?.remove(doc);
      n++;
    }
  });
  return withWriteErrors({ n }, writeErrors);
};

/** findAndModify: a single-document read-modify-write; failures are top-level errors. */
const findAndModify: CommandHandler = (body, ctx) => {
  const name = targetCollection(body, Object.keys(body)[0] as string, ctx);
  const {
    query = {},
    sort,
    remove: isRemove = false,
    update: u,
    new: returnNew = false,
    fields,
    upsert = false,
  } = body;
  if (isRemove && u !== undefined) {
    throw new MongoCommandError('FailedToParse', 'Cannot specify both an update and remove=true');
  }
  if (!isRemove && u === undefined) {
    throw new MongoCommandError('FailedToParse', 'Either an update or remove=true must be specified');
  }
  if (isRemove && upsert)
    throw new MongoCommandError('FailedToParse', 'Cannot specify both upsert=true and remove=true');
  const shape = (doc: Doc | null): Doc | null =>
    doc && isPlainObject(fields) && Object.keys(fields).length > 0
      ? (project([doc], fields, query)[0] ?? null)
      : doc;

  const { catalog } = ctx.state;
  const collection = catalog.get(ctx.db, name);
  const found = runFind(collection, query, { sort, limit: 1 })[0];

  if (isRemove) {
    if (!found) return { lastErrorObject: { n: 0 }, value: null, ok: 1 };
    collection?.remove(found);
    return { lastErrorObject: { n: 1 }, value: shape(found), ok: 1 };
  }
  if (found) {
    const next = applyUpdate(found, u, { arrayFilters: body.arrayFilters, filter: query });
    if (next.changed) collection?.replace(found, next.doc);
    return {
      lastErrorObject: { n: 1, updatedExisting: true },
      value: shape(returnNew ? next.doc : found),
      ok: 1,
    };
  }
  if (upsert) {
    const doc = buildUpsertDocument(query, u, body.arrayFilters);
    catalog.getOrCreate(ctx.db, name).collection.insert(doc);
    return {
      lastErrorObject: { n: 1, updatedExisting: false, upserted: doc._id },
      value: returnNew ? shape(doc) : null,
      ok: 1,
    };
  }
  return { lastErrorObject: { n: 0, updatedExisting: false }, value: null, ok: 1 };
};

export const writeCommands: Record<string, CommandHandler> = {
  insert,
  update,
  delete: remove,
  findAndModify,
  findandmodify: findAndModify,
};
