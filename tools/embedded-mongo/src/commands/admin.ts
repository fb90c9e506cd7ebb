import os from 'node:os';
import { calculateObjectSize, type Document } from 'bson';
import { MongoCommandError } from '../errors';
import { MINGO_COMPILED, Query } from '../mingo/context';
import { USAGE_KINDS, type Usage, type UsageKind } from '../state';
import { validateDatabaseName } from '../store/catalog';
import { optionNumber } from '../store/values';
import { EMBEDDED_MONGOD_VERSION, MAX_WIRE_VERSION } from '../version';
import { MAX_BSON_OBJECT_SIZE, MAX_MESSAGE_SIZE } from '../wire/protocol';
import type { CommandContext, CommandHandler } from './context';

/** A standalone server: no setName, no topologyVersion (so drivers poll instead of streaming). */
function handshake(primaryField: 'isWritablePrimary' | 'ismaster'): CommandHandler {
  return (_body, ctx) => ({
    helloOk: true,
    [primaryField]: true,
    maxBsonObjectSize: MAX_BSON_OBJECT_SIZE,
    maxMessageSizeBytes: MAX_MESSAGE_SIZE,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId: ctx.connectionId,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
    ok: 1,
  });
}

const versionArray = [...EMBEDDED_MONGOD_VERSION.split('.').map(Number), 0];

const buildInfo: CommandHandler = () => ({
  version: EMBEDDED_MONGOD_VERSION,
  gitVersion: 'embedded-mongod',
  modules: [],
  allocator: 'system',
  javascriptEngine: 'none',
  sysInfo: 'deprecated',
  versionArray,
  bits: 64,
  debug: false,
  maxBsonObjectSize: MAX_BSON_OBJECT_SIZE,
  storageEngines: ['ephemeralForTest'],
  ok: 1,
});

const ok: CommandHandler = () => ({ ok: 1 });

function requireAdmin(command: string, ctx: CommandContext): void {
  if (ctx.db !== 'admin') {
    throw new MongoCommandError('Unauthorized', `${command} may only be run against the admin database.`);
  }
}

const listDatabases: CommandHandler = (body, ctx) => {
  requireAdmin('listDatabases', ctx);
  const { catalog } = ctx.state;
  let entries: Document[] = catalog.databaseNames().map((name) => {
    let sizeOnDisk = 0;
    for (const coll of catalog.collections(name))
      for (const doc of coll.all()) sizeOnDisk += calculateObjectSize(doc);
    return { name, sizeOnDisk, empty: false };
  });
  if (body.filter) entries = entries.filter((e) => new Query(body.filter, MINGO_COMPILED).test(e));
  if (body.nameOnly) return { databases: entries.map(({ name }) => ({ name })), ok: 1 };
  const totalSize = entries.reduce((n, e) => n + (e.sizeOnDisk as number), 0);
  return { databases: entries, totalSize, totalSizeMb: Math.floor(totalSize / (1024 * 1024)), ok: 1 };
};

const dropDatabase: CommandHandler = (_body, ctx) => {
  validateDatabaseName(ctx.db);
  ctx.state.catalog.dropDatabase(ctx.db);
  return { dropped: ctx.db, ok: 1 };
};

const setParameter: CommandHandler = (body, ctx) => {
  requireAdmin('setParameter', ctx);
  const reply: Document = { ok: 1 };
  for (const [name, raw] of Object.entries(body)) {
    const value = optionNumber(raw);
    if (name === 'setParameter' || name.startsWith('$') || name === 'lsid' || name === 'comment') continue;
    if (name !== 'ttlMonitorSleepSecs') {
      throw new MongoCommandError(
        'InvalidOptions',
        `attempted to set unrecognized parameter [${name}], use help:true to see options `,
      );
    }
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
      throw new MongoCommandError('BadValue', 'ttlMonitorSleepSecs must be a positive integer');
    }
    reply.was = ctx.state.parameters.ttlMonitorSleepSecs;
    ctx.state.parameters.ttlMonitorSleepSecs = value;
    ctx.state.onParametersChanged();
  }
  return reply;
};

const getParameter: CommandHandler = (body, ctx) => {
  requireAdmin('getParameter', ctx);
  const all =
    body.getParameter === '*' || (typeof body.getParameter === 'object' && body.getParameter?.allParameters);
  if (all || 'ttlMonitorSleepSecs' in body) {
    return { ttlMonitorSleepSecs: ctx.state.parameters.ttlMonitorSleepSecs, ok: 1 };
  }
  throw new MongoCommandError('InvalidOptions', 'no option found to get');
};

const serverStatus: CommandHandler = (_body, ctx) => {
  const { state } = ctx;
  const uptimeMillis = Date.now() - state.startedAt.getTime();
  return {
    host: os.hostname(),
    version: EMBEDDED_MONGOD_VERSION,
    process: 'mongod',
    pid: process.pid,
    uptime: Math.floor(uptimeMillis / 1000),
    uptimeMillis,
    localTime: new Date(),
    connections: {
      current: state.activeConnections,
      available: 1_000_000,
      totalCreated: state.totalConnections,
    },
    metrics: {
      commands: Object.fromEntries([...state.commandCounts].map(([name, c]) => [name, { ...c }])),
    },
    ok: 1,
  };
};

/**
 * `top`: per namespace, how many operations of each kind ran and their time in µs, since start.
 * As mongod's: `total`, `readLock` (queries and getmores), `writeLock` (inserts, updates,
 * removes) and each kind, and only on the admin database. Unlike mongod's, the time is the
 * command's own run in this server, not its lock time.
 */
const top: CommandHandler = (_body, ctx) => {
  if (ctx.db !== 'admin')
    throw new MongoCommandError('Unauthorized', 'top may only be run against the admin database.');
  const totals: Document = { note: 'all times in microseconds' };
  const sum = (usage: Map<UsageKind, Usage>, kinds: readonly UsageKind[]): Usage => {
    const out = { count: 0, time: 0 };
    for (const kind of kinds) {
      const u = usage.get(kind);
      if (u) {
        out.count += u.count;
        out.time += u.time;
      }
    }
    return out;
  };
  for (const [namespace, usage] of [...ctx.state.namespaceUsage].sort(([a], [b]) => (a < b ? -1 : 1))) {
    totals[namespace] = {
      total: sum(usage, USAGE_KINDS),
      readLock: sum(usage, ['queries', 'getmore']),
      writeLock: sum(usage, ['insert', 'update', 'remove']),
      ...Object.fromEntries(USAGE_KINDS.map((kind) => [kind, sum(usage, [kind])])),
    };
  }
  return { totals, ok: 1 };
};

const dbStats: CommandHandler = (_body, ctx) => {
  validateDatabaseName(ctx.db);
  const collections = ctx.state.catalog.collections(ctx.db);
  let objects = 0;
  let dataSize = 0;
  let indexes = 0;
  for (const coll of collections) {
    objects += coll.count;
    indexes += coll.indexCount;
    for (const doc of coll.all()) dataSize += calculateObjectSize(doc);
  }
  return {
    db: ctx.db,
    collections: collections.length,
    views: 0,
    objects,
    avgObjSize: objects > 0 ? dataSize / objects : 0,
    dataSize,
    storageSize: dataSize,
    indexes,
    indexSize: 0,
    totalSize: dataSize,
    scaleFactor: 1,
    ok: 1,
  };
};

const listCommands: CommandHandler = () => {
  const commands: Document = {};
  for (const name of [...commandNames].sort())
    commands[name] = { help: '', requiresAuth: false, secondaryOk: true, adminOnly: false };
  return { commands, ok: 1 };
};

/** Filled by the dispatcher with every command it knows, for listCommands. */
export const commandNames = new Set<string>();

const connectionStatus: CommandHandler = () => ({
  authInfo: { authenticatedUsers: [], authenticatedUserRoles: [] },
  ok: 1,
});

const whatsmyuri: CommandHandler = () => ({ you: '127.0.0.1', ok: 1 });

export const adminCommands: Record<string, CommandHandler> = {
  hello: handshake('isWritablePrimary'),
  isMaster: handshake('ismaster'),
  ismaster: handshake('ismaster'),
  ping: ok,
  buildInfo,
  buildinfo: buildInfo,
  listDatabases,
  dropDatabase,
  endSessions: ok,
  killSessions: ok,
  killAllSessions: ok,
  refreshSessions: ok,
  setParameter,
  getParameter,
  serverStatus,
  top,
  connectionStatus,
  whatsmyuri,
  dbStats,
  dbstats: dbStats,
  listCommands,
};
