import { parseArgs } from 'node:util';
import { type MpesaSimulatorOptions, startMpesaSimulator } from './simulator';

/**
 * `mpesa-simulator`: a local Safaricom Daraja. Prints its URL, then one line per request and
 * per callback. The consumer secret and the passkey are never printed.
 */
const USAGE = `Usage: mpesa-simulator [--port N] [--host H] [options]
A local Safaricom Daraja (OAuth, STK push/query, B2C, Transaction Status) with scripted outcomes.
  --port N                  port to listen on (default 4010; 0 picks a free one)   $MPESA_SIMULATOR_PORT
  --host H                  address to bind (default 127.0.0.1)                     $MPESA_SIMULATOR_HOST
  --consumer-key K          app consumer key (default simulator-consumer-key)       $MPESA_SIMULATOR_CONSUMER_KEY
  --consumer-secret S       app consumer secret (default simulator-consumer-secret) $MPESA_SIMULATOR_CONSUMER_SECRET
  --shortcode N             STK BusinessShortCode (default 174379)                  $MPESA_SIMULATOR_SHORTCODE
  --passkey P               STK passkey (default simulator-passkey)                 $MPESA_SIMULATOR_PASSKEY
  --b2c-shortcode N         B2C shortcode (default 600000)                          $MPESA_SIMULATOR_B2C_SHORTCODE
  --initiator-name N        required B2C InitiatorName (default: any)               $MPESA_SIMULATOR_INITIATOR_NAME
  --security-credential C   required SecurityCredential (default: any)              $MPESA_SIMULATOR_SECURITY_CREDENTIAL
  --callback-delay-ms N     delay before outcomes and callbacks (default 300)       $MPESA_SIMULATOR_CALLBACK_DELAY_MS
  --token-ttl-seconds N     access token lifetime (default 3600)                    $MPESA_SIMULATOR_TOKEN_TTL_SECONDS
  --max-rps N               spike arrest above N requests/s (default off)           $MPESA_SIMULATOR_MAX_RPS
  --timestamp-zone Z        EAT, UTC or any (default any)                           $MPESA_SIMULATOR_TIMESTAMP_ZONE
GET /_requests lists what arrived (DELETE resets); GET /_transactions; GET /_callbacks.`;

function fail(message: string): never {
  process.stderr.write(`mpesa-simulator: ${message}\n${USAGE}\n`);
  process.exit(2);
}

const env = (name: string) => {
  const value = process.env[`MPESA_SIMULATOR_${name}`];
  return value === undefined || value === '' ? undefined : value;
};

function whole(flag: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) fail(`invalid ${flag} ${raw}`);
  return n;
}

type CliOptions = MpesaSimulatorOptions & { port: number; host: string };

/** Each option and the MPESA_SIMULATOR_* variable it falls back to. */
const FLAGS = {
  port: 'PORT',
  host: 'HOST',
  'consumer-key': 'CONSUMER_KEY',
  'consumer-secret': 'CONSUMER_SECRET',
  shortcode: 'SHORTCODE',
  passkey: 'PASSKEY',
  'b2c-shortcode': 'B2C_SHORTCODE',
  'initiator-name': 'INITIATOR_NAME',
  'security-credential': 'SECURITY_CREDENTIAL',
  'callback-delay-ms': 'CALLBACK_DELAY_MS',
  'token-ttl-seconds': 'TOKEN_TTL_SECONDS',
  'max-rps': 'MAX_RPS',
  'timestamp-zone': 'TIMESTAMP_ZONE',
} as const;

type Flag = keyof typeof FLAGS;

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

function parse(argv: string[]): CliOptions {
  const options = Object.fromEntries(
    Object.keys(FLAGS).map((flag) => [flag, { type: 'string' as const }]),
  ) as Record<Flag, { type: 'string' }>;
  let values: Partial<Record<Flag, string>> & { help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (error) {
    parseError(error);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  /** The option's value, else its variable's; an empty option is a mistake, an empty variable unset. */
  const get = (flag: Flag): string | undefined => {
    const given = values[flag];
    if (given === '') fail(`--${flag} needs a value`);
    return given ?? env(FLAGS[flag]);
  };
  const zone = get('timestamp-zone') ?? 'any';
  if (zone !== 'EAT' && zone !== 'UTC' && zone !== 'any') fail(`invalid --timestamp-zone ${zone}`);
  const number = (flag: Flag, min: number, max?: number) => {
    const raw = get(flag);
    return raw === undefined ? undefined : whole(`--${flag}`, raw, min, max);
  };
  return {
    port: number('port', 0, 65535) ?? 4010,
    host: get('host') ?? '127.0.0.1',
    consumerKey: get('consumer-key') ?? 'simulator-consumer-key',
    consumerSecret: get('consumer-secret') ?? 'simulator-consumer-secret',
    shortcode: get('shortcode') ?? '174379',
    passkey: get('passkey') ?? 'simulator-passkey',
    b2cShortcode: get('b2c-shortcode') ?? '600000',
    initiatorName: get('initiator-name'),
    securityCredential: get('security-credential'),
    callbackDelayMs: number('callback-delay-ms', 0),
    tokenTtlSeconds: number('token-ttl-seconds', 1),
    maxRequestsPerSecond: number('max-rps', 1),
    timestampZone: zone,
  };
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const simulator = await startMpesaSimulator(options).catch((error: Error) => {
    process.stderr.write(
      `mpesa-simulator: cannot listen on ${options.host}:${options.port}: ${error.message}\n`,
    );
    process.exit(1);
  });
  process.stdout.write(
    `mpesa-simulator listening on ${simulator.url} (shortcode ${options.shortcode}, b2c shortcode ${options.b2cShortcode}, consumer key ${options.consumerKey})\n`,
  );
  simulator.onRequest((r) => {
    process.stdout.write(`${r.time} ${r.method} ${r.path.split('?')[0]} ${r.status ?? 'hung'}\n`);
  });
  simulator.onCallback((c) => {
    process.stdout.write(`${c.sentAt} callback ${c.kind} ${c.url} ${c.status ?? c.error}\n`);
  });

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
