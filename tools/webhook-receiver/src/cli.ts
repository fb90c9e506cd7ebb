import { parseArgs } from 'node:util';
import { startWebhookReceiver } from './receiver';

/**
 * `webhook-receiver`: a local endpoint for the platform's webhooks. Prints its URL, then one
 * line per delivery. The secret is never printed.
 */
const USAGE = `Usage: webhook-receiver [--port N] [--host H] [--secret S]
Records, verifies and de-duplicates platform webhooks POSTed to any path.
  --port N     port to listen on (default 4000; 0 picks a free one)
  --host H     address to bind (default 127.0.0.1)
  --secret S   signing secret (default: $WEBHOOK_SECRET; or set it later with
               curl -X PUT http://HOST:PORT/_secret -d '{"secret":"..."}')
GET /_received lists what arrived, most recent first.`;

interface CliOptions {
  port: number;
  host: string;
  secret?: string;
}

function fail(message: string): never {
  process.stderr.write(`webhook-receiver: ${message}\n${USAGE}\n`);
  process.exit(2);
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
  let values: { port?: string; host?: string; secret?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        secret: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    parseError(error);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  for (const flag of ['port', 'host', 'secret'] as const) {
    if (values[flag] === '') fail(`--${flag} needs a value`);
  }
  return {
    port: values.port === undefined ? 4000 : port(values.port),
    host: values.host ?? '127.0.0.1',
    secret: values.secret ?? (process.env.WEBHOOK_SECRET || undefined),
  };
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const receiver = await startWebhookReceiver(options).catch((error: Error) => {
    process.stderr.write(
      `webhook-receiver: cannot listen on ${options.host}:${options.port}: ${error.message}\n`,
    );
    process.exit(1);
  });
  const secretState = (set: boolean) => (set ? 'secret set' : 'no secret yet: PUT /_secret to set it');
  process.stdout.write(`webhook-receiver listening on ${receiver.url} (${secretState(!!options.secret)})\n`);

  receiver.onDelivery((d) => {
    const outcome = d.verified ? (d.duplicate ? 'verified duplicate' : 'verified') : `rejected ${d.reason}`;
    process.stdout.write(`${d.receivedAt} ${d.event ?? '-'} ${d.deliveryId ?? '-'} ${outcome}\n`);
  });
  receiver.onSecretChange((set) => process.stdout.write(`${new Date().toISOString()} ${secretState(set)}\n`));

  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    receiver.close().then(() => process.exit(0));
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

void main();
