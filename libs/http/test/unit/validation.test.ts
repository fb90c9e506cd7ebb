import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createApp,
  created,
  defineRoute,
  finishApp,
  implement,
  mountRoutes,
  ok,
  paginationQuery,
  uuid,
} from '@parametric/http';
import { createLogger } from '@parametric/logger';
import { Router } from 'express';
import { z } from 'zod';

const logger = createLogger({ name: 'http-validation-test', level: 'silent' });
const ORG = '3f2b8c1e-7d4a-4e6b-9a1c-2b3d4e5f6a7b';

let server: Server;
let baseUrl: string;
/** Every input a handler was called with, in order. */
let handled: unknown[];

const createPolicyBody = z.strictObject({
  crop: z.string().min(1),
  hectares: z.coerce.number().positive(),
  currency: z.string().default('USD'),
  location: z.strictObject({ region: z.string(), lat: z.number().optional() }).optional(),
});

const echo = z.unknown();
const common = { summary: 'test', tags: ['test'], auth: 'none', errors: [] } as const;
const createPolicy = defineRoute({
  ...common,
  operationId: 'createPolicy',
  method: 'post',
  path: '/orgs/{orgId}/policies',
  params: z.object({ orgId: uuid }),
  body: createPolicyBody,
  responses: { 201: { description: 'echo', data: echo } },
});
const loose = defineRoute({
  ...common,
  operationId: 'loose',
  method: 'post',
  path: '/loose',
  body: z.object({ name: z.string() }),
  responses: { 200: { description: 'echo', data: echo } },
});
const listPolicies = defineRoute({
  ...common,
  operationId: 'listPolicies',
  method: 'get',
  path: '/policies',
  query: paginationQuery(),
  responses: { 200: { description: 'echo', data: echo } },
});
const filtered = defineRoute({
  ...common,
  operationId: 'filtered',
  method: 'get',
  path: '/filtered',
  query: paginationQuery().extend({
    status: z.enum(['OPEN', 'CLOSED']).optional(),
    ownerId: uuid.optional(),
  }),
  responses: { 200: { description: 'echo', data: echo } },
});
const noQuery = defineRoute({
  ...common,
  operationId: 'noQuery',
  method: 'get',
  path: '/me',
  responses: { 200: { description: 'echo', data: echo } },
});
const document = defineRoute({
  ...common,
  operationId: 'document',
  method: 'get',
  path: '/document.json',
  ignoresQuery: true,
  responses: { 200: { description: 'echo', data: echo } },
});
const linked = defineRoute({
  ...common,
  operationId: 'linked',
  method: 'post',
  path: '/linked',
  body: z.strictObject({ farmerId: uuid, plotIds: z.array(uuid) }),
  responses: { 200: { description: 'echo', data: echo } },
});
const smallPages = defineRoute({
  ...common,
  operationId: 'smallPages',
  method: 'get',
  path: '/small-pages',
  query: paginationQuery(5),
  responses: { 200: { description: 'echo', data: echo } },
});

beforeAll(async () => {
  const app = createApp(logger);
  app.use(
    mountRoutes(
      Router(),
      [
        implement(createPolicy, async (input) => {
          handled.push({ params: input.params, body: input.body });
          return created({ params: input.params, body: input.body });
        }),
        implement(loose, async (input) => {
          handled.push({ body: input.body });
          return ok(input.body);
        }),
        implement(listPolicies, async (input) => {
          handled.push({ query: input.query });
          return ok(input.query);
        }),
        implement(filtered, async (input) => {
          handled.push({ query: input.query });
          return ok(input.query);
        }),
        implement(noQuery, async (input) => {
          handled.push({ query: input.query });
          return ok({});
        }),
        implement(document, async () => {
          handled.push('document');
          return ok({});
        }),
        implement(linked, async (input) => {
          handled.push({ body: input.body });
          return ok(input.body);
        }),
        implement(smallPages, async (input) => {
          handled.push({ query: input.query });
          return ok(input.query);
        }),
      ],
      () => undefined,
    ),
  );
  finishApp(app, logger);
  server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

beforeEach(() => {
  handled = [];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
});

function postJson(path: string, body: unknown) {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

interface ErrorEnvelope {
  success: false;
  error: { code: string; message: string; details?: { field: string; message: string }[] };
}

async function expectInvalid(response: Response): Promise<ErrorEnvelope['error']> {
  expect(response.status).toBe(400);
  const body = (await response.json()) as ErrorEnvelope;
  expect(body).toEqual({
    success: false,
    error: {
      code: 'INVALID_INPUT',
      message: expect.any(String),
      details: expect.any(Array),
    },
  });
  expect(body.error.message.length).toBeGreaterThan(0);
  for (const detail of body.error.details ?? []) {
    expect(detail).toEqual({ field: expect.any(String), message: expect.any(String) });
  }
  return body.error;
}

describe('a contract with a valid request', () => {
  it('hands the handler parsed values with defaults applied and coercions done', async () => {
    const response = await postJson(`/orgs/${ORG}/policies`, { crop: 'maize', hectares: '12.5' });
    expect(response.status).toBe(201);
    const expected = { params: { orgId: ORG }, body: { crop: 'maize', hectares: 12.5, currency: 'USD' } };
    expect(handled).toEqual([expected]);
    expect(await response.json()).toEqual({ success: true, data: expected });
  });

  it('strips unknown keys when the schema is not strict', async () => {
    const response = await postJson('/loose', { name: 'Acme', role: 'ORG_ADMIN' });
    expect(response.status).toBe(200);
    expect(handled).toEqual([{ body: { name: 'Acme' } }]);
  });
});

describe('a contract with invalid input', () => {
  it('rejects a field that fails the schema with 400 INVALID_INPUT naming the field', async () => {
    const error = await expectInvalid(await postJson(`/orgs/${ORG}/policies`, { crop: '', hectares: 3 }));
    expect(error.details).toEqual([{ field: 'crop', message: expect.any(String) }]);
    expect(handled).toEqual([]);
  });

  it('reports a nested field by its dotted path', async () => {
    const error = await expectInvalid(
      await postJson(`/orgs/${ORG}/policies`, {
        crop: 'maize',
        hectares: 3,
        location: { region: 'Rift', lat: 'x' },
      }),
    );
    expect(error.details).toEqual([{ field: 'location.lat', message: expect.any(String) }]);
    expect(handled).toEqual([]);
  });

  it('reports every invalid field', async () => {
    const error = await expectInvalid(await postJson(`/orgs/${ORG}/policies`, { hectares: -1 }));
    expect(error.details?.map((d) => d.field).sort()).toEqual(['crop', 'hectares']);
    expect(handled).toEqual([]);
  });

  it('reports each unknown key of a strict schema as its own "Unknown field" detail', async () => {
    const error = await expectInvalid(
      await postJson(`/orgs/${ORG}/policies`, {
        crop: 'maize',
        hectares: 3,
        organizationId: ORG,
        role: 'admin',
      }),
    );
    expect(error.details).toEqual(
      expect.arrayContaining([
        { field: 'organizationId', message: 'Unknown field' },
        { field: 'role', message: 'Unknown field' },
      ]),
    );
    expect(error.details).toHaveLength(2);
    expect(handled).toEqual([]);
  });

  it('reports an unknown key inside a nested strict object by its dotted path', async () => {
    const error = await expectInvalid(
      await postJson(`/orgs/${ORG}/policies`, {
        crop: 'maize',
        hectares: 3,
        location: { region: 'Rift', zip: '1' },
      }),
    );
    expect(error.details).toEqual([{ field: 'location.zip', message: 'Unknown field' }]);
    expect(handled).toEqual([]);
  });

  it('gives a (body) detail when the body is missing', async () => {
    const response = await fetch(`${baseUrl}/orgs/${ORG}/policies`, { method: 'POST' });
    const error = await expectInvalid(response);
    expect(error.details).toEqual([{ field: '(body)', message: expect.any(String) }]);
    expect(handled).toEqual([]);
  });

  it('gives a (body) detail when the body is not an object', async () => {
    const error = await expectInvalid(await postJson(`/orgs/${ORG}/policies`, ['maize']));
    expect(error.details).toEqual([{ field: '(body)', message: expect.any(String) }]);
    expect(handled).toEqual([]);
  });

  it('validates path parameters before the body', async () => {
    const error = await expectInvalid(await postJson('/orgs/not-a-uuid/policies', { crop: '', extra: true }));
    expect(error.details).toEqual([{ field: 'orgId', message: 'must be a uuid' }]);
    expect(handled).toEqual([]);
  });
});

describe('paginationQuery()', () => {
  it('defaults to page 1 and limit 20', async () => {
    const response = await fetch(`${baseUrl}/policies`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ success: true, data: { page: 1, limit: 20 } });
  });

  it('coerces page and limit from the query string to numbers', async () => {
    const response = await fetch(`${baseUrl}/policies?page=3&limit=50`);
    expect(response.status).toBe(200);
    expect(handled).toEqual([{ query: { page: 3, limit: 50 } }]);
  });

  it('accepts a limit of exactly 100', async () => {
    const response = await fetch(`${baseUrl}/policies?limit=100`);
    expect(response.status).toBe(200);
    expect(handled).toEqual([{ query: { page: 1, limit: 100 } }]);
  });

  it('serves a limit above 100 as 100 (the one paging rule, as the spec caps the delivery log)', async () => {
    const response = await fetch(`${baseUrl}/policies?limit=101`);
    expect(response.status).toBe(200);
    expect(handled).toEqual([{ query: { page: 1, limit: 100 } }]);
  });

  it.each(['page=0', 'page=-1', 'page=1.5', 'page=two', 'limit=0', 'limit=abc'])(
    'rejects %s with 400 INVALID_INPUT',
    async (query) => {
      const error = await expectInvalid(await fetch(`${baseUrl}/policies?${query}`));
      expect(error.details?.map((d) => d.field)).toEqual([query.split('=')[0]]);
      expect(handled).toEqual([]);
    },
  );

  it('uses the default it is given, under the same cap', async () => {
    expect((await fetch(`${baseUrl}/small-pages`)).status).toBe(200);
    expect((await fetch(`${baseUrl}/small-pages?limit=500`)).status).toBe(200);
    expect(handled).toEqual([{ query: { page: 1, limit: 5 } }, { query: { page: 1, limit: 100 } }]);
  });
});

describe('query parameters (every route: only those it declares, each once)', () => {
  it.each([
    [
      'an unknown parameter',
      '/filtered?foo=bar',
      'foo',
      /Unknown query parameter: this endpoint takes page, limit, status, ownerId/,
    ],
    [
      'a known one in brackets (status[]=X)',
      '/filtered?status[]=OPEN',
      'status[]',
      /send status=<value> once, without brackets/,
    ],
    ['a known one indexed (status[0]=X)', '/filtered?status%5B0%5D=OPEN', 'status[0]', /without brackets/],
    ['a known one given twice', '/filtered?status=OPEN&status=CLOSED', 'status', /must be given once/],
    ['the same value twice', '/filtered?page=1&page=1', 'page', /must be given once/],
    ['a parameter on a route that takes none', '/me?x=1', 'x', /this endpoint takes none/],
    ['a nameless parameter', '/me?=1', '(query)', /Unknown query parameter/],
    ['__proto__', '/me?__proto__=1', '__proto__', /Unknown query parameter/],
    ['constructor', '/filtered?constructor=1', 'constructor', /Unknown query parameter/],
  ])(
    'refuses %s with 400 INVALID_INPUT naming it, before the handler',
    async (_what, path, field, message) => {
      const error = await expectInvalid(await fetch(`${baseUrl}${path}`));
      expect(error.message).toBe('Invalid query parameters');
      expect(error.details).toEqual([{ field, message: expect.stringMatching(message) }]);
      expect(handled).toEqual([]);
    },
  );

  it('names every problem at once: unknown, repeated and invalid parameters', async () => {
    const error = await expectInvalid(
      await fetch(`${baseUrl}/filtered?foo=1&status=OPEN&status=OPEN&page=0`),
    );
    expect(error.details?.map((d) => d.field).sort()).toEqual(['foo', 'page', 'status']);
    expect(handled).toEqual([]);
  });

  it('still serves the declared parameters, each once, and no parameter at all', async () => {
    expect((await fetch(`${baseUrl}/filtered?status=CLOSED&page=2`)).status).toBe(200);
    expect((await fetch(`${baseUrl}/me`)).status).toBe(200);
    expect((await fetch(`${baseUrl}/me?`)).status).toBe(200);
    expect(handled).toEqual([
      { query: { status: 'CLOSED', page: 2, limit: 20 } },
      { query: undefined },
      { query: undefined },
    ]);
  });

  it('lets a document route ignore what tools add to its URL', async () => {
    expect((await fetch(`${baseUrl}/document.json?v=3&utm_source=mail&v=4`)).status).toBe(200);
    expect(handled).toEqual(['document']);
  });
});

describe('uuid (RFC 9562: any case names the same id)', () => {
  const UPPER = ORG.toUpperCase();

  it('hands the handler a path parameter in lower case', async () => {
    const response = await postJson(`/orgs/${UPPER}/policies`, { crop: 'maize', hectares: 1 });
    expect(response.status).toBe(201);
    expect(handled).toEqual([
      { params: { orgId: ORG }, body: { crop: 'maize', hectares: 1, currency: 'USD' } },
    ]);
  });

  it('hands the handler query and body ids in lower case', async () => {
    expect((await fetch(`${baseUrl}/filtered?ownerId=${UPPER}`)).status).toBe(200);
    expect((await postJson('/linked', { farmerId: UPPER, plotIds: [UPPER, ORG] })).status).toBe(200);
    expect(handled).toEqual([
      { query: { ownerId: ORG, page: 1, limit: 20 } },
      { body: { farmerId: ORG, plotIds: [ORG, ORG] } },
    ]);
  });

  it('still refuses what is not a uuid', async () => {
    const error = await expectInvalid(await postJson('/linked', { farmerId: `${ORG}0`, plotIds: [] }));
    expect(error.details).toEqual([{ field: 'farmerId', message: 'must be a uuid' }]);
  });
});
