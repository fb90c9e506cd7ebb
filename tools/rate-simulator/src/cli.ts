import { type CommandLine, commandLine } from '@parametric/local-process';
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

const cli: CommandLine = commandLine('rate-simulator', USAGE);

/** The CLI guards against typos: only a positive plain decimal (the control API takes anything). */
const POSITIVE_DECIMAL = /^\d{1,30}(\.\d{1,30})?$/;

function checkRate(raw: string, from: string): string {
  if (!POSITIVE_DECIMAL.test(raw) || !/[1-9]/.test(raw)) {
    cli.fail(`${from} must be a positive decimal like ${DEFAULT_KES_PER_USDC}, got "${raw}"`);
  }
  return raw;
}

function parse(argv: string[]): CliOptions {
  const values = cli.parse(argv, ['port', 'host', 'kes-per-usdc'], (error) => {
    // parseArgs takes `--kes-per-usdc -1` for a forgotten value; it is a negative rate, refused as such.
    const at = argv.indexOf('--kes-per-usdc');
    if (/argument is ambiguous/.test(error.message) && at !== -1 && argv[at + 1] !== undefined)
      checkRate(argv[at + 1] as string, '--kes-per-usdc');
  });
  const fromEnv = process.env.RATE_SIMULATOR_KES_PER_USDC;
  const envRate = fromEnv ? checkRate(fromEnv, 'RATE_SIMULATOR_KES_PER_USDC') : DEFAULT_KES_PER_USDC;
  const rate = values['kes-per-usdc'];
  return {
    port: values.port === undefined ? 4100 : cli.port(values.port),
    host: values.host ?? '127.0.0.1',
    kesPerUsdc: rate === undefined ? envRate : checkRate(rate, '--kes-per-usdc'),
  };
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const simulator = await cli.listen(options, () =>
    startRateSimulator({
      ...options,
      log: (line) => process.stdout.write(`${new Date().toISOString()} ${line}\n`),
    }),
  );
  process.stdout.write(
    `rate-simulator listening on ${simulator.url} (${options.kesPerUsdc} KES per USDC at ${EXCHANGE_RATES_PATH}?currency=USDC)\n`,
  );

  cli.closeOnSignal(() => simulator.close());
}

void main();
