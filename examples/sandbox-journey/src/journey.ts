/**
 * The whole sandbox journey of docs/getting-started.md, through @parametric/sdk and node's own
 * modules only: register a sandbox organization, receive its webhooks on an endpoint of our own
 * (each delivery verified), a farmer and a plot, a policy bought and activated, a test
 * determination issued and its signature verified, its event received, its settlement reported
 * and that event received. Each step prints a line; any failure exits 1, and every wait is
 * bounded. How to run it: examples/sandbox-journey/README.md.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createClient, verifyDetermination, type WebhookEvent } from '@parametric/sdk';
import { startReceiver } from './receiver';

const USAGE = `usage: tsx src/journey.ts [options]

  --base-url URL        the partner API, ending with /api (env BASE_URL; default http://127.0.0.1:3000/api)
  --listen HOST:PORT    where this program's webhook endpoint listens (env WEBHOOK_LISTEN;
                        default 127.0.0.1:0, a free port)
  --webhook-url URL     the URL the platform delivers to, when not the listening address itself
                        (a tunnel or proxy in front of it; env WEBHOOK_URL)
  --wait-seconds N      how long each webhook event is waited for (default 60)
  --timeout-seconds N   the whole journey at most (default 300)
  --save-key FILE       write { organizationId, apiKey } of the new organization to FILE (mode 600):
                        the key is shown once, at registration`;

interface Options {
  baseUrl: string;
  listenHost: string;
  listenPort: number;
  webhookUrl: string | undefined;
  waitMs: number;
  timeoutMs: number;
  saveKey: string | undefined;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      'base-url': { type: 'string', default: process.env.BASE_URL ?? 'http://127.0.0.1:3000/api' },
      listen: { type: 'string', default: process.env.WEBHOOK_LISTEN ?? '127.0.0.1:0' },
      'webhook-url': { type: 'string', default: process.env.WEBHOOK_URL },
      'wait-seconds': { type: 'string', default: '60' },
      'timeout-seconds': { type: 'string', default: '300' },
      'save-key': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const listen = /^(.+):(\d+)$/.exec(values.listen);
  const seconds = (name: 'wait-seconds' | 'timeout-seconds') => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value <= 0)
      throw new Error(`--${name} takes a positive number of seconds`);
    return value * 1000;
  };
  if (!listen) throw new Error('--listen takes HOST:PORT (port 0: a free one)');
  return {
    baseUrl: values['base-url'].replace(/\/+$/, ''),
    listenHost: (listen[1] as string).replace(/^\[(.*)\]$/, '$1'),
    listenPort: Number(listen[2]),
    webhookUrl: values['webhook-url'] || undefined,
    waitMs: seconds('wait-seconds'),
    timeoutMs: seconds('timeout-seconds'),
    saveKey: values['save-key'],
  };
}

/**
 * The success body of an SDK call. The SDK never throws the API's errors: it answers
 * `{ data, error, response }` with exactly one of the two set (libs/sdk/README.md).
 */
// #region ok
async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (data === undefined) throw new Error(`${response.status} ${JSON.stringify(error)}`);
  return data;
}
// #endregion ok

const say = (line: string) => console.log(line);

async function journey(opts: Options): Promise<void> {
  let step = 'starting the webhook endpoint';
  const seenEvents: string[] = [];
  const receiver = await startReceiver({
    host: opts.listenHost,
    port: opts.listenPort,
    path: '/hooks/sandbox-journey',
    onEvent: (event) => seenEvents.push(event.event),
  });
  const timeout = setTimeout(() => {
    console.error(`FAILED at ${step}: the journey took more than ${opts.timeoutMs / 1000} s`);
    process.exit(1);
  }, opts.timeoutMs);
  const event = async (name: string, matches: (event: WebhookEvent) => boolean) =>
    receiver.waitFor(name, (e) => e.event === name && matches(e), opts.waitMs);

  try {
    step = 'registering a sandbox organization';
    // #region register
    const anonymous = createClient({ baseUrl: opts.baseUrl });
    const registered = await ok(
      anonymous.POST('/auth/register-organization', {
        body: {
          name: 'Rift Valley Growers (SDK sandbox journey)',
          type: 'COOPERATIVE',
          countryCode: 'KE',
          environment: 'sandbox',
        },
      }),
    );
    const organization = registered.data.organization;
    // The key and secret are shown once: a real integration puts them in its secret store now.
    const api = createClient({ baseUrl: opts.baseUrl, apiKey: organization.apiKey });
    // #endregion register
    if (opts.saveKey) {
      const saved = { organizationId: organization.id, apiKey: organization.apiKey };
      writeFileSync(opts.saveKey, `${JSON.stringify(saved)}\n`, { mode: 0o600 });
    }
    say(
      `1. registered sandbox organization ${organization.id} (${organization.environment}, KYB ${organization.kybStatus})`,
    );

    step = 'setting the webhook URL';
    // #region webhook
    const webhookUrl = opts.webhookUrl ?? receiver.url;
    const webhook = await ok(api.PUT('/organizations/me/webhook', { body: { url: webhookUrl } }));
    // The signing secret comes with the first URL set: every delivery is checked with it
    // (verifyWebhook, in ./receiver.ts). Keep it server-side, like the API key.
    if (!webhook.data.secret) throw new Error('the webhook answer holds no secret');
    receiver.setSecret(webhook.data.secret);
    // #endregion webhook
    say(`2. webhooks go to ${webhook.data.url}, each delivery verified with the secret the API answered`);
    step = 'waiting for kyb.verified';
    // Emitted at registration, before there was a URL: events wait for it (docs/webhooks.md).
    await event('kyb.verified', (e) => e.data.organizationId === organization.id);
    say('   kyb.verified received (it waited for the URL), signature verified');

    step = 'creating a farmer and a plot';
    const farmer = await ok(
      api.POST('/farmers', {
        body: {
          firstName: 'Amina',
          lastName: 'Otieno',
          phoneNumber: '+254712345678',
          nationalId: 'KE20261128',
          region: 'Nakuru',
        },
      }),
    );
    const plot = await ok(
      api.POST('/plots', {
        body: {
          farmerId: farmer.data.id,
          name: 'North field',
          latitude: -0.3031,
          longitude: 36.08,
          areaHectares: 1.5,
          cropType: 'MAIZE',
        },
      }),
    );
    say(`3. farmer ${farmer.data.id} (KYC ${farmer.data.kycStatus}), plot ${plot.data.id}`);

    step = 'buying and activating a policy';
    // #region policy
    // The SDK gives the purchase an Idempotency-Key, so a retry after a lost answer buys nothing twice.
    const purchase = await ok(
      api.POST('/policies/purchase', {
        body: {
          farmerId: farmer.data.id,
          productType: 'CROP',
          plotId: plot.data.id,
          sumInsured: 50000,
          coverageType: 'DROUGHT',
          durationDays: 180,
        },
      }),
    );
    const policyId = purchase.data.policy.id;
    // DETERMINATION tier: you collect the premium yourself, then activate the policy.
    const activated = await ok(api.PUT('/policies/{id}/activate', { params: { path: { id: policyId } } }));
    // #endregion policy
    say(
      `4. policy ${purchase.data.policy.policyNumber} bought (premium ${purchase.data.policy.premium}), ${activated.data.status}`,
    );
    step = 'waiting for policy.activated';
    await event('policy.activated', (e) => e.data.policyId === policyId);
    say('   policy.activated received, signature verified');

    step = 'issuing a test determination';
    // #region determination
    const issued = await ok(
      api.POST('/sandbox/determinations', { body: { policyId, triggered: true, damagePercentBp: 4000 } }),
    );
    const determination = issued.data;
    // The platform's public keys: no credential needed.
    const jwks = await ok(anonymous.GET('/.well-known/jwks.json'));
    const verdict = verifyDetermination(determination, jwks, { acceptSandbox: true });
    if (!verdict.valid) {
      throw new Error(`the determination does not verify: ${verdict.code} ${verdict.reason}`);
    }
    // Live code passes no acceptSandbox: a sandbox key's signature is then refused.
    const live = verifyDetermination(determination, jwks);
    if (live.valid || live.code !== 'SANDBOX_KEY') throw new Error('a live verifier accepted a sandbox key');
    const owed = determination.amountOwed; // null only when the platform cannot state it
    if (!owed) throw new Error(`no amount owed: ${determination.amountOwedUnavailableReason}`);
    // #endregion determination
    say(
      `5. determination ${determination.determinationId}: ${determination.damagePercentBp / 100}% damage, ${owed.amount} ${owed.currency} owed`,
    );
    say(
      `6. its signature verifies: signed by ${verdict.kid} (sandbox key); a live verifier refuses it (${live.code})`,
    );

    step = 'waiting for determination.delivered';
    // #region delivered
    const delivered = await event(
      'determination.delivered',
      (e) => e.data.determinationId === determination.determinationId,
    );
    // The event is signed with the webhook secret; the determination it names is the one verified above.
    if (delivered.data.canonicalHash !== determination.canonicalHash) {
      throw new Error('determination.delivered names another canonicalHash than the verified determination');
    }
    // #endregion delivered
    say(
      '7. determination.delivered received, signature verified, the same canonicalHash as the determination',
    );

    step = 'reporting the settlement';
    // #region settlement
    // DETERMINATION tier: you pay the farmer what is owed, then report it.
    const settlement = await ok(
      api.POST('/determinations/{id}/settlement-report', {
        params: { path: { id: determination.determinationId } },
        body: {
          partnerReference: `RVG-PAY-${determination.determinationId.slice(0, 8)}`,
          outcome: 'SETTLED_FULL',
          method: 'MOBILE_MONEY',
          settledAmountMinor: owed.amountMinor,
          settlementCurrency: owed.currency,
          settledAt: new Date().toISOString(),
        },
      }),
    );
    // #endregion settlement
    const reportId = settlement.data.report.id;
    say(`8. settlement reported: ${settlement.data.partnerSettlementStatus} (report ${reportId})`);

    step = 'waiting for determination.settlement_report_recorded';
    await event('determination.settlement_report_recorded', (e) => {
      const report = e.data.report as { id?: unknown } | undefined;
      return e.data.determinationId === determination.determinationId && report?.id === reportId;
    });
    say('9. determination.settlement_report_recorded received, signature verified');
    say(`done: every step passed; events received and verified: ${seenEvents.join(', ')}`);
  } catch (error) {
    throw new Error(`FAILED at ${step}: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    clearTimeout(timeout);
    await receiver.close();
  }
}

// Bad options fail like any step: a message and exit 1.
Promise.resolve()
  .then(() => journey(options(process.argv.slice(2))))
  .then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
