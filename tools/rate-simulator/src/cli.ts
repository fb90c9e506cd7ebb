import { parseArgs } from 'node:util';
import { DEFAULT_KES_PER_USDC, EXCHANGE_RATES_PATH, startRateSimulator } from './simulator';

/** `rate-simulator`: a local Coinbase exchange-rates API. Prints its URL, then one line per control change. */
const USAGE = `Usage: rate-simulator [--port N] [--host H] [--kes-per-usdc R]
Serves Coinbase's GET ${EXCHANGE_RATES_PATH}?currency=USDC with a KES rate you choose.
  --port N           port to listen on (default 4100; 0 picks a free one)
  --host H           address to bind (default 127.0.0.1)
  --kes-per-usdc R   KES per 1 USDC, a positive decimal (default: $RATE_SIMULATOR_KES_PER_USDC,
                     else ${DEFAULT_KES_PER_USDC})
Control: PUT /_rate {"kesPerUsdc":"130.10"}, PUT /_behaviour {"mode":"ok|down|hang|garbage"},
GET /_requests.`;

interface CliOptions {
  port: number;
  host: string;
  kesPerUsdc: string;
}

function fail(message: string): never {
  process.stderr.write(`rate-simulator: ${message}\n${USAGE}\n`);
  process.exit(2);
}

/** The CLI guards against typos: only a positive plain decimal (the control API takes anything). */
const POSITIVE_DECIMAL = /^\d{1,30}(\.\d{1,30})?$/;

function checkRate(raw: string, from: string): string {
  if (!POSITIVE_DECIMAL.test(raw) || !/[1-9]/.test(raw)) {
    fail(`${from} must be a positive decimal like ${DEFAULT_KES_PER_USDC}, got "${raw}"`);
  }
  return raw;
}

/** parseArgs' errors, worded as this command words them. */
function parseError(error: unknown): never {
  const { code, message } = error as NodeJS.ErrnoException;
  const quoted = /'([^' ,]*)/.exec(message)?.[1];
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      fail(`unknown option ${quoted}`);
      break;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      // Also `--port -1`: parseArgs takes a value starting with '-' for a forgotten one.
      fail(
        `${quoted} needs a value${/ambiguous/.test(message) ? ` (one starting with '-' goes as ${quoted}=VALUE)` : ''}`,
      );
      break;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      fail(`unexpected argument ${quoted}`);
  }
  throw error;
}

/** A port, 0 (any free one) to 65535. */
function port(raw: string): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n > 65535) fail(`invalid port ${raw}`);
  return n;
}

function parse(argv: string[]): CliOptions {
  let values: { port?: string; host?: string; 'kes-per-usdc'?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'kes-per-usdc': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    // parseArgs takes `--kes-per-usdc -1` for a forgotten value; it is a negative rate, refused as such.
    const at = argv.indexOf('--kes-per-usdc');
    if (/argument is ambiguous/.test((error as Error).message) && at !== -1 && argv[at + 1] !== undefined)
      checkRate(argv[at + 1] as string, '--kes-per-usdc');
    parseError(error);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  for (const flag of ['port', 'host', 'kes-per-usdc'] as const) {
    if (values[flag] === '') fail(`--${flag} needs a value`);
  }
  const fromEnv = process.env.RATE_SIMULATOR_KES_PER_USDC;
  const envRate = fromEnv ? checkRate(fromEnv, 'RATE_SIMULATOR_KES_PER_USDC') : DEFAULT_KES_PER_USDC;
  const rate = values['kes-per-usdc'];
  return {
    port: values.port === undefined ? 4100 : port(values.port),
    host: values.host ?? '127.0.0.1',
    kesPerUsdc: rate === undefined ? envRate : checkRate(rate, '--kes-per-usdc'),
  };
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const simulator = await startRateSimulator({
    ...options,
    log: (line) => process.stdout.write(`${new Date().toISOString()} ${line}\n`),
  }).catch((error: Error) => {
    process.stderr.write(
      `rate-simulator: cannot listen on ${options.host}:${options.port}: ${error.message}\n`,
    );
    process.exit(1);
  });
  process.stdout.write(
    `rate-simulator listening on ${simulator.url} (${options.kesPerUsdc} KES per USDC at ${EXCHANGE_RATES_PATH}?currency=USDC)\n`,
  );

  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    simulator.close().then(() => process.exit(0));
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

void main();
