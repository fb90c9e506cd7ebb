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

function parse(argv: string[]): CliOptions {
  const options: CliOptions = {
    port: 4000,
    host: '127.0.0.1',
    secret: process.env.WEBHOOK_SECRET || undefined,
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
      case '--secret':
        options.secret = value();
        break;
      default:
        fail(`unknown option ${arg}`);
    }
  }
  return options;
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
