import { existsSync } from 'node:fs';
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

const IGNORED_WITH_VALUE = new Set([
  '--storageEngine',
  '--wiredTigerCacheSizeGB',
  '--logpath',
  '--oplogSize',
]);
const IGNORED_FLAGS = new Set(['--noauth', '--quiet', '--nounixsocket', '--ipv6', '--fork']);

function fail(message: string, code = 2): never {
  process.stderr.write(`Error parsing command line: ${message}\n${USAGE}\n`);
  process.exit(code);
}

function parse(argv: string[]): CliOptions {
  const options: CliOptions = { port: 27017, host: '127.0.0.1', persist: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] =
      arg.includes('=') && arg.startsWith('--')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) fail(`the argument for option '${flag}' is missing`);
      return v;
    };
    switch (flag) {
      case '--version':
        process.stdout.write(
          `db version v${EMBEDDED_MONGOD_VERSION}\nBuild Info: ${JSON.stringify({ version: EMBEDDED_MONGOD_VERSION, gitVersion: 'embedded-mongod', environment: { distmod: 'embedded' } }, null, 4)}\n`,
        );
        process.exit(0);
        break;
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        process.exit(0);
        break;
      case '--port': {
        const port = Number(value());
        if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`invalid port ${port}`);
        options.port = port;
        break;
      }
      case '--bind_ip':
        options.host = (value().split(',')[0] as string).trim();
        break;
      case '--bind_ip_all':
        options.host = '0.0.0.0';
        break;
      case '--dbpath':
        options.dbpath = value();
        break;
      case '--persist':
        options.persist = true;
        break;
      case '--setParameter': {
        const [name, raw] = value().split('=');
        if (name !== 'ttlMonitorSleepSecs' || !raw || !/^\d+$/.test(raw) || Number(raw) < 1)
          fail(`unsupported --setParameter ${name}`);
        options.ttlMonitorSleepSecs = Number(raw);
        break;
      }
      case '--auth':
      case '--replSet':
      case '--keyFile':
        fail(`${flag} is not supported by embedded-mongod (standalone, no authentication)`, 1);
        break;
      default:
        if (IGNORED_FLAGS.has(flag)) break;
        if (IGNORED_WITH_VALUE.has(flag)) {
          value();
          break;
        }
        fail(`unrecognised option '${flag}'`);
    }
  }
  if (options.persist && options.dbpath === undefined) fail('--persist needs --dbpath DIR');
  return options;
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
