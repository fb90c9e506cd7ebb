import { readFileSync } from 'node:fs';
import path from 'node:path';
import { API_VERSION, FOUR_EYES_ROUTES, OPS_ROUTES, PARTNER_ROUTES } from '@parametric/contracts';
import { EVENT_NAMES } from '@parametric/events';
import { expressPath } from '@parametric/http';
import { mountedRoutes } from '../../../test/contract/express-routes';
import { PUBLIC_ROUTES } from '../src/forwarding/routes';
import { OPS_TOKEN, startTestGateway, type TestGateway } from './support';

let t: TestGateway;

beforeAll(async () => {
  t = await startTestGateway();
});

afterAll(async () => {
  await t.stop();
});

/** The committed snapshot of a served document (test/unit/openapi-snapshot.test.ts keeps it current). */
const snapshot = (name: 'partner' | 'ops') =>
  JSON.parse(readFileSync(path.join(__dirname, `../../../docs/openapi/${name}.json`), 'utf8'));

const count = (routes: Record<string, readonly unknown[]>) => Object.values(routes).flat().length;
const operationsOf = (doc: { paths: Record<string, Record<string, unknown>> }) =>
  Object.values(doc.paths).flatMap((item) => Object.keys(item)).length;

describe('GET /api/openapi.json', () => {
  it('serves the OpenAPI 3.1.0 document (interface API_VERSION) without a key, with every partner route of every service', async () => {
    const reply = await t.api('GET', '/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body.openapi).toBe('3.1.0');
    expect(reply.body.info.version).toBe(API_VERSION);
    expect(operationsOf(reply.body)).toBe(count(PARTNER_ROUTES));
    // What partners fetch is what docs/openapi/ records.
    expect(reply.body).toEqual(snapshot('partner'));
    expect(reply.body.paths['/policies/purchase'].post.operationId).toBe('purchasePolicy');
    expect(reply.body.paths['/organizations/me/webhook'].put.operationId).toBe('setWebhook');
    expect(reply.body.components.securitySchemes.apiKey).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-api-key' }),
    );
    // No ops route leaks into the partner document.
    expect(JSON.stringify(reply.body.paths)).not.toContain('/kyb');
  });

  it('documents each event of the catalog as a webhook with its data fields and the five signature headers', async () => {
    const { webhooks } = (await t.api('GET', '/openapi.json')).body;
    expect(Object.keys(webhooks).sort()).toEqual([...EVENT_NAMES].sort());
    for (const event of EVENT_NAMES) {
      const post = webhooks[event].post;
      const headers = post.parameters
        .filter((p: { in: string }) => p.in === 'header')
        .map((p: { name: string }) => p.name);
      expect(headers.sort()).toEqual(
        [
          'user-agent',
          'x-service-delivery',
          'x-service-event',
          'x-service-signature',
          'x-service-timestamp',
        ].sort(),
      );
      expect(post.requestBody.content['application/json'].schema).toBeDefined();
    }
    const activated = (await t.api('GET', '/openapi.json')).body.components.schemas.Event_policy_activated;
    expect(Object.keys(activated.properties.data.properties).sort()).toEqual(
      ['farmerId', 'onChainPolicyId', 'policyId', 'policyNumber', 'sumInsured', 'txHash'].sort(),
    );
  });
});

describe('GET /api/docs', () => {
  it('renders the document with assets served by the gateway itself (works offline)', async () => {
    const page = await fetch(`${t.gateway.partnerUrl}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      expect(ref).not.toMatch(/^(https?:)?\/\//);
      const asset = await fetch(new URL(ref, `${t.gateway.partnerUrl}/docs`));
      expect([ref, asset.status]).toEqual([ref, 200]);
      expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
    const init = await (await fetch(`${t.gateway.partnerUrl}/docs/assets/init.js`)).text();
    expect(init).toContain("url: 'openapi.json'");
    expect(init).toContain('validatorUrl: null');
  });

  it('serves only the assets the page needs', async () => {
    const reply = await t.api('GET', '/docs/assets/index.html');
    expect([reply.status, reply.body.error.code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe('GET /ops/openapi.json', () => {
  it('needs the ops token, and documents every ops route with the bearer scheme', async () => {
    expect((await fetch(`${t.gateway.opsUrl}/openapi.json`)).status).toBe(401);
    const reply = await t.ops('GET', '/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.body.openapi).toBe('3.1.0');
    expect(operationsOf(reply.body)).toBe(count(OPS_ROUTES));
    expect(reply.body).toEqual(snapshot('ops'));
    expect(reply.body.components.securitySchemes.opsBearer).toEqual(
      expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    );
    expect(reply.body.paths['/organizations/me']).toBeUndefined();
    expect(OPS_TOKEN.length).toBeGreaterThan(0);
  });
});

describe('OPTIONS', () => {
  it('answers 204 with the declared methods of the path, not express’s 200 text/plain', async () => {
    const reply = await fetch(`${t.gateway.partnerUrl}/policies/3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b`, {
      method: 'OPTIONS',
    });
    expect(reply.status).toBe(204);
    expect(reply.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    const webhook = await fetch(`${t.gateway.partnerUrl}/organizations/me/webhook`, { method: 'OPTIONS' });
    expect(webhook.headers.get('allow')).toBe('GET, HEAD, OPTIONS, PUT');
  });

  it('answers 404 in the envelope for a path no route has', async () => {
    const reply = await t.api('OPTIONS', '/no-such-thing');
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
  });
});

describe('the gateway mounts exactly the routes its contracts declare', () => {
  const declared = (routes: readonly { method: string; path: string }[]) =>
    routes.map((r) => `${r.method.toUpperCase()} ${expressPath(r.path)}`).sort();
  const infrastructure = (route: string) => !/ \/(healthz|readyz|metrics)$/.test(route);

  // Public routes other services serve (no key, no context) are forwarded by exact path.
  const forwardedPublic = PUBLIC_ROUTES.map((r) => {
    const contract = PARTNER_ROUTES[r.service as keyof typeof PARTNER_ROUTES].find(
      (c) => c.method === 'get' && c.path === r.path,
    );
    return { method: 'get', path: contract?.path ?? `${r.path} (not declared by ${r.service})` };
  });

  it('on the partner port', () => {
    expect(mountedRoutes(t.gateway.partnerApp).filter(infrastructure)).toEqual(
      declared([...PARTNER_ROUTES.gateway, ...forwardedPublic]),
    );
  });

  it('forwards public routes only when their service declares them without a key', () => {
    for (const r of PUBLIC_ROUTES) {
      const contract = PARTNER_ROUTES[r.service as keyof typeof PARTNER_ROUTES].find(
        (c) => c.path === r.path,
      );
      expect(contract).toMatchObject({ method: 'get', auth: 'none' });
    }
  });

  it('on the ops port', () => {
    // Undeclared ops routes, since no contract describes what they answer: the OAuth token
    // endpoint answers RFC 6749's shapes, not the envelope (docs/decisions.md, "Ops machine
    // clients"); the queue dashboard's sign-in and sign-out are pages for a browser, HTML and a
    // form body and redirects (docs/decisions.md, "The queue dashboard's sign-in"). The four-eyes
    // gate (src/approvals/gate.ts) stands before the routes that carry a gated action out, ours
    // and forwarded ones, on their declared paths: it answers 202 or hands on.
    expect(mountedRoutes(t.gateway.opsApp).filter(infrastructure)).toEqual(
      declared([...OPS_ROUTES.gateway, ...Object.values(FOUR_EYES_ROUTES)])
        .concat(
          'POST /auth/token',
          'GET /queues/sign-in',
          'POST /queues/sign-in',
          'GET /queues/sign-out',
          'POST /queues/sign-out',
        )
        .sort(),
    );
  });
});
