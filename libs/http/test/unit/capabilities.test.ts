import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AppError,
  assertCapability,
  CAPABILITIES,
  capabilitiesOf,
  createApp,
  defineRoute,
  finishApp,
  implement,
  mountRoutes,
  ok,
  ROLE_CAPABILITIES,
  ROLES,
  requireInternalContext,
  signContext,
} from '@parametric/http';
import { createLogger } from '@parametric/logger';
import { Router } from 'express';
import { z } from 'zod';

/** What `assertCapability` throws, or `undefined` when it lets the caller through. */
function refusalOf(run: () => void): Pick<AppError, 'code' | 'status' | 'message'> | undefined {
  try {
    run();
    return undefined;
  } catch (err) {
    const { code, status, message } = err as AppError;
    return { code, status, message };
  }
}

describe('assertCapability against the role table', () => {
  it.each(ROLES)(
    '%s: passes exactly the capabilities the table gives it, refuses the rest with 403 naming them',
    (role) => {
      for (const capability of CAPABILITIES) {
        const refusal = refusalOf(() =>
          assertCapability({ role, capabilities: capabilitiesOf(role) }, capability),
        );
        expect({ capability, refusal }).toEqual({
          capability,
          refusal: ROLE_CAPABILITIES[role].includes(capability)
            ? undefined
            : {
                code: 'FORBIDDEN',
                status: 403,
                message: `Your role ${role} lacks the capability ${capability} this endpoint needs`,
              },
        });
      }
    },
  );

  it('gives a role the table does not name nothing', () => {
    expect(capabilitiesOf('ORG_SUPERUSER')).toEqual([]);
    expect(
      refusalOf(() => assertCapability({ role: 'ORG_SUPERUSER', capabilities: [] }, 'organization:read')),
    ).toMatchObject({ code: 'FORBIDDEN' });
  });

  it('holds a caller to the capabilities it carries, even where its role has more (an older dashboard token)', () => {
    const caller = { role: 'ORG_ADMIN', capabilities: ROLE_CAPABILITIES.ORG_VIEWER };
    expect(refusalOf(() => assertCapability(caller, 'policy:write'))).toMatchObject({
      code: 'FORBIDDEN',
      message: 'Your role ORG_ADMIN lacks the capability policy:write this endpoint needs',
    });
    expect(refusalOf(() => assertCapability(caller, 'policy:read'))).toBeUndefined();
  });
});

describe('mountRoutes enforces each route’s declared capability', () => {
  const SECRET = 'capability-test-secret-0123456789';
  const ORG = '6a1f9d2c-3b4e-4f5a-8b6c-7d8e9f0a1b2c';
  const common = { summary: 'test', tags: ['test'], errors: [] } as const;
  const writePolicy = defineRoute({
    ...common,
    operationId: 'writePolicy',
    method: 'post',
    path: '/policies',
    auth: 'partner',
    capability: 'policy:write',
    body: z.strictObject({ name: z.string() }),
    responses: { 200: { description: 'written', data: z.object({ name: z.string() }) } },
  });
  const logger = createLogger({ name: 'http-capabilities-test', level: 'silent' });
  let server: Server;
  let baseUrl: string;
  let written: string[];

  beforeAll(async () => {
    const app = createApp(logger);
    const routes = [
      implement(writePolicy, async ({ body }) => {
        written.push(body.name);
        return ok({ name: body.name });
      }),
    ];
    app.use(
      '/api',
      requireInternalContext(SECRET),
      mountRoutes(Router(), routes, () => undefined),
    );
    // The same route mounted with nothing that verifies its caller.
    app.use(
      '/unguarded',
      mountRoutes(Router(), routes, () => undefined),
    );
    finishApp(app, logger);
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  beforeEach(() => {
    written = [];
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve, reject) =>
      server.close((error) => (error ? reject(error) : resolve())),
    );
  });

  const post = async (path: string, role: string | undefined, body: unknown) => {
    const signed = role
      ? signContext({ organizationId: ORG, role, requestId: 'cap-test', issuedAt: Date.now() }, SECRET)
      : {};
    const response = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { ...signed, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as { error?: { code: string } } };
  };

  it('refuses a signed role without the capability with 403 in the envelope, before the handler', async () => {
    expect(await post('/api/policies', 'ORG_VIEWER', { name: 'maize' })).toEqual({
      status: 403,
      body: {
        success: false,
        error: {
          code: 'FORBIDDEN',
          message: 'Your role ORG_VIEWER lacks the capability policy:write this endpoint needs',
        },
      },
    });
    expect(written).toEqual([]);
  });

  it('refuses before validating the input: a caller without the capability learns nothing of it', async () => {
    const refused = await post('/api/policies', 'ORG_FINANCE', { unknown: true });
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'FORBIDDEN']);
    const checked = await post('/api/policies', 'ORG_OPERATOR', { unknown: true });
    expect([checked.status, checked.body.error?.code]).toEqual([400, 'INVALID_INPUT']);
  });

  it('lets a role with the capability through to the handler', async () => {
    expect(await post('/api/policies', 'ORG_OPERATOR', { name: 'maize' })).toEqual({
      status: 200,
      body: { success: true, data: { name: 'maize' } },
    });
    expect(written).toEqual(['maize']);
  });

  it('fails closed where no caller was verified: 500, the handler never runs', async () => {
    expect(await post('/unguarded/policies', undefined, { name: 'maize' })).toEqual({
      status: 500,
      body: { success: false, error: { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred' } },
    });
    expect(written).toEqual([]);
  });

  it('refuses to mount a partner route that declares no capability', () => {
    const { capability: _, ...undeclared } = writePolicy;
    expect(() =>
      mountRoutes(Router(), [implement(undeclared, async () => ok({ name: 'x' }))], () => undefined),
    ).toThrow('writePolicy is a partner route that declares no capability');
  });
});
