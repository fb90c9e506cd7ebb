import { type CommandLine, commandLine } from '@parametric/local-process';
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
               curl -X PUT http://HOST:PORT/_secret -d '{"secret":"..."}'; several
               organizations, each its own path and secret:
               curl -X PUT http://HOST:PORT/_secret -d '{"secret":"...","path":"/hooks/org-b"}')
GET /_received lists what arrived, most recent first.`;

interface CliOptions {
  port: number;
  host: string;
  secret?: string;
}

const cli: CommandLine = commandLine('webhook-receiver', USAGE);

function parse(argv: string[]): CliOptions {
  const values = cli.parse(argv, ['port', 'host', 'secret']);
  return {
    port: values.port === undefined ? 4000 : cli.port(values.port),
    host: values.host ?? '127.0.0.1',
    secret: values.secret ?? (process.env.WEBHOOK_SECRET || undefined),
  };
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const receiver = await cli.listen(options, () => startWebhookReceiver(options));
  const secretState = (set: boolean) => (set ? 'secret set' : 'no secret yet: PUT /_secret to set it');
  process.stdout.write(`webhook-receiver listening on ${receiver.url} (${secretState(!!options.secret)})\n`);

  receiver.onDelivery((d) => {
    const outcome = d.verified ? (d.duplicate ? 'verified duplicate' : 'verified') : `rejected ${d.reason}`;
    process.stdout.write(`${d.receivedAt} ${d.event ?? '-'} ${d.deliveryId ?? '-'} ${outcome}\n`);
  });
  receiver.onSecretChange((set) => process.stdout.write(`${new Date().toISOString()} ${secretState(set)}\n`));

  cli.closeOnSignal(() => receiver.close());
}

void main();
