import type { Document } from 'bson';
import { MongoCommandError } from '../errors';
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

/** Runs one command and always returns a reply document: failures become `{ ok: 0, ... }`. */
export function runCommand(body: Document, ctx: CommandContext): Reply {
  try {
    return dispatch(body, ctx);
  } catch (err) {
    if (err instanceof MongoCommandError) return err.toReply();
    const message = err instanceof Error ? err.message : String(err);
    return new MongoCommandError('InternalError', `embedded-mongod internal error: ${message}`).toReply();
  } finally {
    // Before the reply leaves: whatever the command changed (even a batch that failed
    // part-way) is in memory now, so it must be in the journal before a client can act on it.
    // A journal that cannot be written throws here, and the connection closes unanswered.
    ctx.state.commitMutations();
  }
}

function dispatch(body: Document, ctx: CommandContext): Reply {
  const name = Object.keys(body)[0];
  const handler = name === undefined ? undefined : handlers.get(name);
  if (!handler) throw new MongoCommandError('CommandNotFound', `no such command: '${name ?? ''}'`);
  // A standalone mongod has no transactions: refusing them loudly keeps callers from
  // believing a multi-document write was atomic.
  if (body.txnNumber !== undefined || body.startTransaction !== undefined || body.autocommit !== undefined) {
    throw new MongoCommandError(
      'IllegalOperation',
      'Transaction numbers are only allowed on a replica set member or mongos',
    );
  }
  const fields = COMMAND_FIELDS[name as string];
  if (fields) rejectUnknownFields(body, name as string, fields);
  return handler(body, ctx);
}
