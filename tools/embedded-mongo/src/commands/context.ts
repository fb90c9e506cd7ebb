import type { Document } from 'bson';
import { MongoCommandError } from '../errors';
import type { ServerState } from '../state';
import { validateCollectionName, validateDatabaseName } from '../store/catalog';
import type { Reply } from '../wire/encoded';

export interface CommandContext {
  state: ServerState;
  /** `$db` of the request. */
  db: string;
  connectionId: number;
  /** Kind-1 sections of the OP_MSG, merged into the command's array arguments. */
  sequences: Map<string, Document[]>;
}

/** A command; it answers a reply document, or one it encoded itself (cursor batches). */
export type CommandHandler = (body: Document, ctx: CommandContext) => Reply;

/** The collection a command names in its first field, validated. */
export function targetCollection(body: Document, command: string, ctx: CommandContext): string {
  validateDatabaseName(ctx.db);
  return validateCollectionName(ctx.db, body[command]);
}

/** A command's array argument, from the body or from an OP_MSG document sequence. */
export function arrayArgument(
  body: Document,
  field: string,
  command: string,
  ctx: CommandContext,
): Document[] {
  const fromSequence = ctx.sequences.get(field);
  const value = fromSequence ?? body[field];
  if (value === undefined) {
    throw new MongoCommandError(
      'Location40414',
      `BSON field '${command}.${field}' is missing but a required field`,
    );
  }
  if (!Array.isArray(value)) {
    throw new MongoCommandError(
      'TypeMismatch',
      `BSON field '${command}.${field}' is the wrong type, expected type 'array'`,
    );
  }
  return value as Document[];
}

export function optionalNumber(body: Document, field: string, command: string): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n)) {
    throw new MongoCommandError(
      'TypeMismatch',
      `BSON field '${command}.${field}' is the wrong type, expected a number`,
    );
  }
  return n;
}

export function nonNegative(value: number | undefined, field: string): number | undefined {
  if (value !== undefined && value < 0) {
    throw new MongoCommandError(
      'Location51024',
      `BSON field '${field}' value must be >= 0, actual value '${value}'`,
    );
  }
  return value;
}

/** Fields any command may carry (sessions, concerns, API version, routing metadata). */
const GENERIC_FIELDS = new Set([
  '$db',
  'lsid',
  'txnNumber',
  'autocommit',
  'startTransaction',
  '$clusterTime',
  '$readPreference',
  'readConcern',
  'writeConcern',
  'comment',
  'maxTimeMS',
  'apiVersion',
  'apiStrict',
  'apiDeprecationErrors',
  '$audit',
  '$client',
  'mayBypassWriteBlocking',
  '$configServerState',
  'databaseVersion',
  'shardVersion',
  'let',
]);

/** Rejects fields the command does not define, as mongod's IDL parser does (40415). */
export function rejectUnknownFields(body: Document, command: string, allowed: readonly string[]): void {
  for (const field of Object.keys(body)) {
    if (field === command || GENERIC_FIELDS.has(field) || allowed.includes(field)) continue;
    throw new MongoCommandError('Location40415', `BSON field '${command}.${field}' is an unknown field.`);
  }
}
