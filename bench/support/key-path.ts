/**
 * The gateway's key path, `GET /api/organizations/me` with an API key, as bench/gateway.ts and
 * bench/instructions.ts start it: the gateway and the webhooks service (which owns the webhook
 * URL the read shows) as the platform runs them, an organization registered through the API,
 * and beside them its design floor and its duty floor (bench/support/floor-gateway.ts), checked
 * to answer the gateway's very bytes and to spend one point of the same Redis limit. `wrap`
 * gives a process a command to run under and extra node flags (bench/instructions.ts runs the
 * gateway and both floors under callgrind).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { freePort } from '@parametric/local-process';
import { assertOnePointEach, assertSameBody } from './floors';
import { ACCESS_LINES, serviceEnv, startBenchGateway } from './platform';
import { json, startNamed, type Wrap, waitReady } from './run';

/** The dashboard admin the organization is registered with (bench/gateway.ts signs in as it). */
export const KEY_PATH_ADMIN = { email: 'admin@bench.example', password: 'sorghum-rains-bench-2026' };

export interface KeyPath {
  /** The gateway's partner API, `…/api`. */
  api: string;
  organization: { id: string; apiKey: string };
  /** What the gateway answered `GET /organizations/me` with, and both floors answer too. */
  body: string;
  /** The API key's pepper (the duty floor hashes keys with it). */
  pepper: string;
  gateway: ChildProcess;
  webhooks: ChildProcess;
  /** Where each floor answers `GET /api/organizations/me`, and its process. */
  floor: { url: string; child: ChildProcess };
  duties: { url: string; child: ChildProcess };
}

/**
 * Starts the gateway and the webhooks service, registers an organization whose webhook is
 * `webhookUrl`, then starts both floors (each process pushed onto `children` as it starts, so the
 * caller stops them) and checks them against the gateway.
 */
export async function startKeyPath(
  stores: { mongoUrl: string; redisUrl: string },
  children: ChildProcess[],
  options: { webhookUrl: string; wrap?: Wrap; readySeconds?: number },
): Promise<KeyPath> {
  const { wrap } = options;
  const [gatewayPort, opsPort, webhooksPort, floorPort, dutiesPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const shared = serviceEnv(stores.mongoUrl, stores.redisUrl);
  const pepper = randomBytes(24).toString('hex');
  const webhooks = startNamed(
    'services/webhooks/src/main.ts',
    'webhooks',
    {
      ...shared,
      WEBHOOKS_HOST: '127.0.0.1',
      WEBHOOKS_PORT: String(webhooksPort),
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
      // The bench points the webhook at a local address, as npm start lets a developer do.
      ALLOW_INSECURE_WEBHOOKS: 'true',
    },
    wrap,
  );
  children.push(webhooks);
  const gateway = startBenchGateway(shared, {
    gatewayPort,
    opsPort,
    opsToken: randomBytes(24).toString('hex'),
    pepper,
    calls: { WEBHOOKS_URL: `http://127.0.0.1:${webhooksPort}` },
    wrap,
  });
  children.push(gateway);
  await waitReady([gatewayPort, webhooksPort], options.readySeconds);
  const api = `http://127.0.0.1:${gatewayPort}/api`;
  const { organization } = await json<{ organization: { id: string; apiKey: string } }>(
    `${api}/auth/register-organization`,
    {
      method: 'POST',
      body: JSON.stringify({
        type: 'COOPERATIVE',
        countryCode: 'KE',
        name: 'Bench Co-op',
        adminEmail: KEY_PATH_ADMIN.email,
        adminPassword: KEY_PATH_ADMIN.password,
      }),
    },
  );
  const key = { 'x-api-key': organization.apiKey };
  await json(`${api}/organizations/me/webhook`, {
    method: 'PUT',
    headers: key,
    body: JSON.stringify({ url: options.webhookUrl }),
  });
  const body = await (await fetch(`${api}/organizations/me`, { headers: key })).text();
  if (!body.includes(options.webhookUrl)) throw new Error(`unexpected organization: ${body}`);

  // The floor of this read, on the same Redis, with the gateway's partner limit (its budget as
  // big as the gateway's here), answering the body the gateway answered; the duty floor is the
  // same with the per-request duties on (docs/performance.md, "The duty floor"), hashing API
  // keys with the gateway's own pepper.
  const floorEnv = {
    ...process.env,
    REDIS_URL: stores.redisUrl,
    RATE_LIMIT_POINTS: '1000000000',
    FLOOR_ORGANIZATION_ID: organization.id,
    FLOOR_ME_BODY: body,
  };
  const floor = startNamed(
    'bench/support/floor-gateway.ts',
    'floor',
    { ...floorEnv, PORT: String(floorPort) },
    wrap,
  );
  const duties = startNamed(
    'bench/support/floor-gateway.ts',
    'duties',
    {
      ...floorEnv,
      PORT: String(dutiesPort),
      FLOOR_DUTIES: '1',
      // A completion line per request when the platform's services write one (BENCH_LOG_LEVEL).
      FLOOR_ACCESS_LINE: ACCESS_LINES ? '1' : '',
      FLOOR_API_KEY_PEPPER: pepper,
      FLOOR_API_KEY: organization.apiKey,
    },
    wrap,
  );
  children.push(floor, duties);
  await waitReady([floorPort, dutiesPort], options.readySeconds);
  const sides = {
    gateway: `${api}/organizations/me`,
    floor: `http://127.0.0.1:${floorPort}/api/organizations/me`,
    'duty floor': `http://127.0.0.1:${dutiesPort}/api/organizations/me`,
  };
  for (const side of ['floor', 'duty floor'] as const) {
    assertSameBody(
      `GET /api/organizations/me (${side})`,
      body,
      await (await fetch(sides[side], { headers: key })).text(),
    );
  }
  await assertOnePointEach(
    stores.redisUrl,
    organization.id,
    Object.fromEntries(
      Object.entries(sides).map(([side, url]) => [side, () => fetch(url, { headers: key })]),
    ),
  );
  return {
    api,
    organization,
    body,
    pepper,
    gateway,
    webhooks,
    floor: { url: sides.floor, child: floor },
    duties: { url: sides['duty floor'], child: duties },
  };
}
