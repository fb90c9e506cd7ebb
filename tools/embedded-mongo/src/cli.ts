import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DataDirError } from './persistence';
import { EmbeddedMongoServer } from './server';
import { EMBEDDED_MONGOD_VERSION } from './version';

/**
 * `embedded-mongod`: a stand-in for `mongod` that accepts the flags mongodb-memory-server
 * passes and prints the structured log lines it waits for. Data lives in memory unless
 * `--persist` is given: then it is kept in `--dbpath` (snapshot + journal) across restarts,
 * kill -9 included. mongodb-memory-server always passes a `--dbpath` (a temporary one for
 * tests), which is why `--dbpath` alone does not turn persistence on.
 */
interface CliOptions {
  port: number;
  host: string;
  dbpath?: string;
  persist: boolean;
  ttlMonitorSleepSecs?: number;
}

const USAGE = `Usage: embedded-mongod [--port N] [--bind_ip HOST] [--dbpath DIR [--persist]] [--setParameter ttlMonitorSleepSecs=N]
A MongoDB-wire-compatible server (reports itself as mongod ${EMBEDDED_MONGOD_VERSION}). Data lives in memory
unless --persist is given: then it is kept in --dbpath (which must exist) across restarts; each write
is journalled before it is acknowledged (safe against the process being killed, not fsynced: a
power cut can lose the last ~30 s), and the data is compacted at start, on SIGTERM/SIGINT and as
the journal grows. Without --persist, --dbpath is only checked to exist.
Accepted for compatibility and ignored: --noauth, --storageEngine, --quiet, --nounixsocket, --wiredTigerCacheSizeGB.`;

/** Accepted for mongod compatibility and ignored (those of type string take a value). */
const IGNORED = {
  storageEngine: { type: 'string' },
  wiredTigerCacheSizeGB: { type: 'string' },
  logpath: { type: 'string' },
  oplogSize: { type: 'string' },
  noauth: { type: 'boolean' },
  quiet: { type: 'boolean' },
  nounixsocket: { type: 'boolean' },
  ipv6: { type: 'boolean' },
  fork: { type: 'boolean' },
} as const;

/** mongod's options we refuse rather than pretend to honour (exit 1, as a failed start). */
const UNSUPPORTED = {
  auth: { type: 'boolean' },
  replSet: { type: 'string' },
  keyFile: { type: 'string' },
} as const;

function fail(message: string, code = 2): never {
  process.stderr.write(`Error parsing command line: ${message}\n${USAGE}\n`);
  process.exit(code);
}

function unsupported(flag: string): never {
  fail(`${flag} is not supported by embedded-mongod (standalone, no authentication)`, 1);
}

/** parseArgs' errors, worded as mongod words them. */
function parseError(error: unknown): never {
  const { code, message } = error as NodeJS.ErrnoException;
  const flag = /'(-[^' ,]*)/.exec(message)?.[1] ?? '';
  if (flag.replace(/^--/, '') in UNSUPPORTED) unsupported(flag);
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      fail(`unrecognised option '${flag}'`);
      break;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      fail(
        /does not take an argument/.test(message)
          ? `option '${flag}' does not take any arguments`
          : `the argument for option '${flag}' is missing`,
      );
      break;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      fail(`unrecognised argument '${/'([^']*)'/.exec(message)?.[1]}'`);
  }
  throw error;
}

function parse(argv: string[]): CliOptions {
  let values: ReturnType<typeof parseCommandLine>['values'];
  try {
    ({ values } = parseCommandLine(argv));
  } catch (error) {
    parseError(error);
  }
  if (values.version) {
    process.stdout.write(
      `db version v${EMBEDDED_MONGOD_VERSION}\nBuild Info: ${JSON.stringify({ version: EMBEDDED_MONGOD_VERSION, gitVersion: 'embedded-mongod', environment: { distmod: 'embedded' } }, null, 4)}\n`,
    );
    process.exit(0);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  for (const flag of Object.keys(UNSUPPORTED) as (keyof typeof UNSUPPORTED)[]) {
    if (values[flag] !== undefined) unsupported(`--${flag}`);
  }
  const options: CliOptions = { port: 27017, host: '127.0.0.1', persist: values.persist === true };
  if (values.port !== undefined) {
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`invalid port ${port}`);
    options.port = port;
  }
  if (values.bind_ip !== undefined) options.host = (values.bind_ip.split(',')[0] as string).trim();
  if (values.bind_ip_all) options.host = '0.0.0.0';
  if (values.dbpath !== undefined) options.dbpath = values.dbpath;
  for (const parameter of values.setParameter ?? []) {
    const [name, raw] = parameter.split('=');
    if (name !== 'ttlMonitorSleepSecs' || !raw || !/^\d+$/.test(raw) || Number(raw) < 1)
      fail(`unsupported --setParameter ${name}`);
    options.ttlMonitorSleepSecs = Number(raw);
  }
  if (options.persist && options.dbpath === undefined) fail('--persist needs --dbpath DIR');
  return options;
}

function parseCommandLine(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      version: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      port: { type: 'string' },
      bind_ip: { type: 'string' },
      bind_ip_all: { type: 'boolean' },
      dbpath: { type: 'string' },
      persist: { type: 'boolean' },
      setParameter: { type: 'string', multiple: true },
      ...UNSUPPORTED,
      ...IGNORED,
    },
  });
}

/** A mongod-style structured log line (mongodb-memory-server matches on `msg`). */
function logLine(
  id: number,
  ctx: string,
  msg: string,
  attr: Record<string, unknown> = {},
  component = 'NETWORK',
): void {
  process.stdout.write(
    `${JSON.stringify({ t: { $date: new Date().toISOString() }, s: 'I', c: component, id, ctx, msg, attr })}\n`,
  );
}

/** mongod's exit code for a failed start on a bad or locked dbpath. */
const EXIT_DBPATH = 100;
/** mongod's exit code when it must abort (a write it cannot make durable). */
const EXIT_ABRUPT = 14;

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  if (options.dbpath !== undefined && !existsSync(options.dbpath)) {
    logLine(20557, 'initandlisten', 'DBException in initAndListen, terminating', {
      error: `NonExistentPath: Data directory ${options.dbpath} not found.`,
    });
    process.exit(100);
  }
  const server = await EmbeddedMongoServer.start({
    port: options.port,
    host: options.host,
    ttlMonitorSleepSecs: options.ttlMonitorSleepSecs,
    log: (message) => logLine(22944, 'conn', message),
    ...(options.persist
      ? {
          dataDir: options.dbpath,
          logPersistence: (message: string, attr?: Record<string, unknown>) =>
            logLine(22430, 'initandlisten', message, attr, 'STORAGE'),
          onPersistenceFailure: (err: Error) => {
            logLine(
              23093,
              'conn',
              'Fatal assertion: journal write failed',
              { error: err.message },
              'STORAGE',
            );
            process.exit(EXIT_ABRUPT);
          },
        }
      : {}),
  }).catch((err: Error) => {
    if (err instanceof DataDirError || (err as NodeJS.ErrnoException).syscall !== 'listen') {
      logLine(20557, 'initandlisten', 'DBException in initAndListen, terminating', { error: err.message });
      process.exit(EXIT_DBPATH);
    }
    logLine(20568, 'initandlisten', 'Error setting up listener', { error: err.message });
    process.exit(48);
  });
  logLine(21951, 'initandlisten', 'Options set by command line', { options });
  logLine(23016, 'listener', 'Waiting for connections', { port: server.port, ssl: 'off' });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logLine(23377, 'SignalHandler', 'Received signal', { signal });
    server.stop().then(
      () => {
        logLine(20626, 'SignalHandler', 'Shutting down', { exitCode: 0 });
        process.exit(0);
      },
      (err: Error) => {
        // The journal is still whole: the next start replays it.
        logLine(20626, 'SignalHandler', 'Shutting down', { exitCode: 1, error: err.message });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

void main();
