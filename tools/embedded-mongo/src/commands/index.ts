import type { Document } from 'bson';
import { MongoCommandError } from '../errors';
import type { UsageKind } from '../state';
import type { Reply } from '../wire/encoded';
import { adminCommands, commandNames } from './admin';
import { type CommandContext, type CommandHandler, rejectUnknownFields } from './context';
import { ddlCommands } from './ddl';
import { explainCommands } from './explain';
import { COMMAND_FIELDS } from './fields';
import { readCommands } from './read';
import { writeCommands } from './write';

const handlers = new Map<string, CommandHandler>(
  Object.entries({ ...adminCommands, ...readCommands, ...writeCommands, ...ddlCommands, ...explainCommands }),
);
for (const name of handlers.keys()) commandNames.add(name);

/** How `top` files each command that names a collection (the rest are `commands`). */
const KIND_OF: Record<string, UsageKind> = {
  find: 'queries',
  count: 'queries',
  distinct: 'queries',
  aggregate: 'queries',
  getMore: 'getmore',
  insert: 'insert',
  update: 'update',
  findAndModify: 'update',
  delete: 'remove',
};

/**
 * The namespace a command works on, for `top`: its first field's collection name, or getMore's
 * `collection`; none for a command about the server or a database.
 */
function namespaceOf(name: string, body: Document, ctx: CommandContext): string | undefined {
  const collection = name === 'getMore' ? body.collection : body[name];
  return typeof collection === 'string' && collection !== '' ? `${ctx.db}.${collection}` : undefined;
}

/** Runs one command and always returns a reply document: failures become `{ ok: 0, ... }`. */
export function runCommand(body: Document, ctx: CommandContext): Reply {
  const name = Object.keys(body)[0] ?? '';
  const started = performance.now();
  let failed = true;
  try {
    const reply = dispatch(name, body, ctx);
    failed = false;
    return reply;
  } catch (err) {
    if (err instanceof MongoCommandError) return err.toReply();
    const message = err instanceof Error ? err.message : String(err);
    return new MongoCommandError('InternalError', `embedded-mongod internal error: ${message}`).toReply();
  } finally {
    if (handlers.has(name)) {
      const micros = Math.round((performance.now() - started) * 1000);
      ctx.state.recordCommand(
        name,
        namespaceOf(name, body, ctx),
        KIND_OF[name] ?? 'commands',
        micros,
        failed,
      );
    }
    // Before the reply leaves: whatever the command changed (even a batch that failed
    // part-way) is in memory now, so it must be in the journal before a client can act on it.
    // A journal that cannot be written throws here, and the connection closes unanswered.
    ctx.state.commitMutations();
  }
}

function dispatch(name: string, body: Document, ctx: CommandContext): Reply {
  const handler = handlers.get(name);
  if (!handler) throw new MongoCommandError('CommandNotFound', `no such command: '${name}'`);
  // A standalone mongod has no transactions: refusing them loudly keeps callers from
  // believing a multi-document write was atomic.
  if (body.txnNumber !== undefined || body.startTransaction !== undefined || body.autocommit !== undefined) {
    throw new MongoCommandError(
      'IllegalOperation',
      'Transaction numbers are only allowed on a replica set member or mongos',
    );
  }
  const fields = COMMAND_FIELDS[name];
  if (fields) rejectUnknownFields(body, name, fields);
  return handler(body, ctx);
}
