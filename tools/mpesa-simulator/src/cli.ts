import { type CommandLine, commandLine } from '@parametric/local-process';
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

// Annotated: a never-returning `cli.fail` narrows only through an explicitly typed name.
const cli: CommandLine = commandLine('mpesa-simulator', USAGE);

const env = (name: string) => {
  const value = process.env[`MPESA_SIMULATOR_${name}`];
  return value === undefined || value === '' ? undefined : value;
};

function whole(flag: string, raw: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max) cli.fail(`invalid ${flag} ${raw}`);
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

function parse(argv: string[]): CliOptions {
  const values = cli.parse(argv, Object.keys(FLAGS) as Flag[]);
  /** The option's value, else its variable's (an empty option is refused by the parse, an empty variable is unset). */
  const get = (flag: Flag): string | undefined => values[flag] ?? env(FLAGS[flag]);
  const zone = get('timestamp-zone') ?? 'any';
  if (zone !== 'EAT' && zone !== 'UTC' && zone !== 'any') cli.fail(`invalid --timestamp-zone ${zone}`);
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
  const simulator = await cli.listen(options, () => startMpesaSimulator(options));
  process.stdout.write(
    `mpesa-simulator listening on ${simulator.url} (shortcode ${options.shortcode}, b2c shortcode ${options.b2cShortcode}, consumer key ${options.consumerKey})\n`,
  );
  simulator.onRequest((r) => {
    process.stdout.write(`${r.time} ${r.method} ${r.path.split('?')[0]} ${r.status ?? 'hung'}\n`);
  });
  simulator.onCallback((c) => {
    process.stdout.write(`${c.sentAt} callback ${c.kind} ${c.url} ${c.status ?? c.error}\n`);
  });

  cli.closeOnSignal(() => simulator.close());
}

void main();
