import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { localDevPrivateKey } from '@parametric/chain';
import { eventually } from '@parametric/test-harness';
import { assessment } from '../../services/determinations/test/support';
import { bootPlatform, call, type PortName, paidTier2Policy, platformEnv, type Running } from './support';

/**
 * Issue 14: the platform as `npm start` runs it, every service logging at `debug`, through a
 * whole Tier 2 flow (registration, dashboard sign-in, webhook, farmer, KYC, purchase, M-Pesa
 * premium, activation on chain, a triggered determination, its payout). Then every line any
 * process wrote is searched for what must never be logged: keys, secrets, tokens, passwords,
 * private keys, and the farmer's national ID and phone number in any of its spellings.
 */

const ADMIN_PASSWORD = 'sorghum-and-millet-2026';
const NATIONAL_ID = 'KE73910284';
// Spellings of the farmer's number that could reach a log: E.164, Daraja's MSISDN, local.
const PHONE = '+254712398761';
const PHONE_SPELLINGS = [PHONE, '254712398761', '0712398761'];

jest.setTimeout(240_000);

describe('logs of a whole flow under npm start', () => {
  let platform: Running;
  const secrets = {
    OPS_TOKEN: randomBytes(24).toString('base64url'),
    INTERNAL_SIGNING_SECRET: randomBytes(24).toString('base64url'),
    API_KEY_PEPPER: randomBytes(24).toString('base64url'),
    PAYMENTS_CALLBACK_TOKEN: randomBytes(24).toString('base64url'),
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
  };
  const leaked: Record<string, string> = {};
  let ports: Record<PortName, number>;

  beforeAll(async () => {
    // Its own MongoDB, Redis and chain, as a newcomer's `npm start` has.
    const started = await platformEnv({ ...secrets, LOG_LEVEL: 'debug' });
    ports = started.ports;
    platform = await bootPlatform(started.env);
  });

  afterAll(async () => {
    if (platform.child.exitCode === null && platform.child.signalCode === null) {
      const exited = once(platform.child, 'exit');
      platform.child.kill('SIGTERM');
      await exited;
    }
  });

  it('binds the internal services and the ops API to loopback only', () => {
    const internal: PortName[] = [
      'OPS_PORT',
      'WEBHOOKS_PORT',
      'POLICY_PORT',
      'DETERMINATIONS_PORT',
      'PAYMENTS_PORT',
    ];
    for (const name of internal) {
      expect({ name, addresses: listeningAddresses(ports[name]) }).toEqual({
        name,
        addresses: ['127.0.0.1'],
      });
    }
  });

  it('writes no key, secret, token, password, private key, national ID or phone number', async () => {
    const api = `http://127.0.0.1:${ports.GATEWAY_PORT}/api`;
    const ops = `http://127.0.0.1:${ports.OPS_PORT}/ops`;
    const asOps = { authorization: `Bearer ${secrets.OPS_TOKEN}` };

    const { organization } = await call(
      'POST',
      `${api}/auth/register-organization`,
      {},
      {
        name: 'Log Scan Co-op',
        type: 'COOPERATIVE',
        countryCode: 'KE',
        adminEmail: 'finance@logscan.example',
        adminPassword: ADMIN_PASSWORD,
      },
    );
    leaked.apiKey = organization.apiKey;
    leaked.apiSecret = organization.apiSecret;
    const key = { 'x-api-key': organization.apiKey };

    const session = await call(
      'POST',
      `${api}/auth/login`,
      {},
      {
        email: 'finance@logscan.example',
        password: ADMIN_PASSWORD,
      },
    );
    leaked.accessToken = session.accessToken;
    leaked.refreshToken = session.refreshToken;
    await call('GET', `${api}/organizations/me`, { authorization: `Bearer ${session.accessToken}` });
    const refreshed = await call('POST', `${api}/auth/refresh`, {}, { refreshToken: session.refreshToken });
    leaked.refreshedAccessToken = refreshed.accessToken;
    leaked.refreshedRefreshToken = refreshed.refreshToken;

    const webhook = await call('PUT', `${api}/organizations/me/webhook`, key, {
      url: `http://127.0.0.1:${ports.WEBHOOK_RECEIVER_PORT}/hooks`,
    });
    leaked.webhookSecret = webhook.secret;
    // The local partner endpoint verifies signatures with the secret the partner was given.
    const told = await fetch(`http://127.0.0.1:${ports.WEBHOOK_RECEIVER_PORT}/_secret`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ secret: webhook.secret }),
    });
    expect(told.ok).toBe(true);

    const policy = await paidTier2Policy({
      api,
      ops,
      asOps,
      organizationId: organization.id,
      key,
      licenceNumber: 'IRA-LOG-1',
      farmer: { phoneNumber: PHONE, nationalId: NATIONAL_ID },
    });
    await call('POST', `${ops}/determinations`, asOps, assessment({ policyId: policy.id }));
    // Every event delivered to the partner's endpoint, the payout's included.
    await eventually(
      async () => {
        const log = await call('GET', `${api}/organizations/me/webhook/deliveries`, key);
        const deliveries = log.deliveries as Array<{
          event: string;
          status: string;
          lastError: string | null;
        }>;
        // Everything delivered (the last error shows when not), the payout's event included.
        expect(deliveries.filter((d) => d.status !== 'DELIVERED')).toEqual([]);
        expect(deliveries.map((d) => d.event)).toEqual(
          expect.arrayContaining(['policy.activated', 'payout.completed']),
        );
      },
      { timeout: 90_000, interval: 1_000, message: 'the flow’s webhooks delivered' },
    );

    // Stop it as Ctrl-C does, so the shutdown's lines are scanned too.
    const exited = once(platform.child, 'exit');
    platform.child.kill('SIGTERM');
    await exited;
    // Every log line, whichever process wrote it (JSON lines: the banner is no log line, and
    // shows the developer the demo organization's key on purpose).
    const lines = platform
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{') && line.includes('"level"'));
    expect(lines.some((line) => line.includes('"msg":"request completed"'))).toBe(true);

    const forbidden: Record<string, string> = {
      ...leaked,
      ...secrets,
      adminPassword: ADMIN_PASSWORD,
      nationalId: NATIONAL_ID,
      ...Object.fromEntries(PHONE_SPELLINGS.map((spelling, i) => [`phone${i}`, spelling])),
      // npm start's local chain registers with anvil's first account: with or without its 0x.
      chainPrivateKey: localDevPrivateKey(0).slice(2),
    };
    const patterns: Record<string, RegExp> = {
      'a PEM private key': /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
      'an API key': /pik_(live|test|reg|sandbox_reg)_[A-Za-z0-9]{16,}/,
      'an M-Pesa consumer key of this run': /local-[0-9a-f]{24}/,
    };
    /** Each finding with the first line it is on (the value itself blanked out). */
    const found: string[] = [];
    for (const [name, value] of Object.entries(forbidden)) {
      const line = lines.find((l) => l.toLowerCase().includes(value.toLowerCase()));
      if (value && line) found.push(`${name}: ${line.split(value).join('<HERE>').slice(0, 400)}`);
    }
    for (const [name, pattern] of Object.entries(patterns)) {
      const line = lines.find((l) => pattern.test(l));
      if (line) found.push(`${name}: ${line.replace(pattern, '<HERE>').slice(0, 400)}`);
    }
    expect(found).toEqual([]);
  });
});

/** The local addresses a TCP port is listened on (Linux's socket tables), e.g. `127.0.0.1`. */
function listeningAddresses(port: number): string[] {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const found = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [local, , state] = line.trim().split(/\s+/).slice(1);
      if (state !== '0A' || !local?.endsWith(`:${hex}`)) continue;
      const address = local.slice(0, -5);
      if (address.length === 8) {
        // IPv4, little-endian bytes.
        found.add(
          (address.match(/../g) ?? [])
            .reverse()
            .map((byte) => Number.parseInt(byte, 16))
            .join('.'),
        );
      } else {
        found.add(address === '00000000000000000000000000000000' ? '::' : `ipv6:${address}`);
      }
    }
  }
  return [...found];
}
