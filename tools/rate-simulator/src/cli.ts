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

function parse(argv: string[]): CliOptions {
  const fromEnv = process.env.RATE_SIMULATOR_KES_PER_USDC;
  const options: CliOptions = {
    port: 4100,
    host: '127.0.0.1',
    kesPerUsdc: fromEnv ? checkRate(fromEnv, 'RATE_SIMULATOR_KES_PER_USDC') : DEFAULT_KES_PER_USDC,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const value = () => {
      const v = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (v === undefined || v === '') fail(`${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        process.exit(0);
        break;
      case '--port': {
        const raw = value();
        const port = Number(raw);
        if (!/^\d+$/.test(raw) || port > 65535) fail(`invalid port ${raw}`);
        options.port = port;
        break;
      }
      case '--host':
        options.host = value();
        break;
      case '--kes-per-usdc':
        options.kesPerUsdc = checkRate(value(), '--kes-per-usdc');
        break;
      default:
        fail(`unknown option ${arg}`);
    }
  }
  return options;
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
