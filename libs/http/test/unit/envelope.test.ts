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
  page,
  paginationQuery,
} from '@parametric/http';
import { createLogger } from '@parametric/logger';
import { Router } from 'express';
import { z } from 'zod';

const logger = createLogger({ name: 'http-envelope-test', level: 'silent' });
let server: Server;
let baseUrl: string;

const common = { summary: 'test', tags: ['test'], auth: 'none', errors: [] } as const;
const getPolicy = defineRoute({
  ...common,
  operationId: 'getPolicy',
  method: 'get',
  path: '/policy',
  responses: {
    200: {
      description: 'one',
      data: z.object({ id: z.string(), premium: z.number(), tags: z.array(z.string()) }),
    },
  },
});
const createPolicy = defineRoute({
  ...common,
  operationId: 'createPolicy',
  method: 'post',
  path: '/policies',
  responses: { 201: { description: 'created', data: z.object({ id: z.string() }) } },
});
const getEmpty = defineRoute({
  ...common,
  operationId: 'getEmpty',
  method: 'get',
  path: '/empty',
  responses: { 200: { description: 'nothing', data: z.null() } },
});

const listPolicies = defineRoute({
  operationId: 'listPolicies',
  method: 'get',
  path: '/policies',
  summary: 'test',
  tags: ['test'],
  auth: 'none',
  query: paginationQuery().extend({ total: z.coerce.number().int().min(0) }),
  responses: { 200: { description: 'a page', item: z.object({ n: z.number() }) } },
  errors: [],
});

beforeAll(async () => {
  const app = createApp(logger);
  app.use(
    mountRoutes(
      Router(),
      [
        implement(getPolicy, async () => ok({ id: 'pol-1', premium: 12.5, tags: ['maize'] })),
        implement(createPolicy, async () => created({ id: 'pol-2' })),
        implement(getEmpty, async () => ok(null)),
        implement(listPolicies, async ({ query }) => {
          const start = (query.page - 1) * query.limit;
          const items = Array.from(
            { length: Math.max(0, Math.min(query.limit, query.total - start)) },
            (_, i) => ({
              n: start + i + 1,
            }),
          );
          return page(items, { page: query.page, limit: query.limit, total: query.total });
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

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
});

describe('a data reply', () => {
  it('responds 200 with { success: true, data }', async () => {
    const response = await fetch(`${baseUrl}/policy`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      success: true,
      data: { id: 'pol-1', premium: 12.5, tags: ['maize'] },
    });
  });

  it('uses the status the handler answered (201 from created())', async () => {
    const response = await fetch(`${baseUrl}/policies`, { method: 'POST' });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ success: true, data: { id: 'pol-2' } });
  });

  it('keeps a null data value in the envelope', async () => {
    const response = await fetch(`${baseUrl}/empty`);
    expect(await response.json()).toEqual({ success: true, data: null });
  });
});

describe('a page reply', () => {
  async function page(query: string) {
    const response = await fetch(`${baseUrl}/policies?${query}`);
    expect(response.status).toBe(200);
    return (await response.json()) as {
      success: boolean;
      data: unknown[];
      pagination: Record<string, unknown>;
    };
  }

  it('responds with the items and { page, limit, total, totalPages }', async () => {
    const body = await page('page=2&limit=2&total=5');
    expect(body).toEqual({
      success: true,
      data: [{ n: 3 }, { n: 4 }],
      pagination: { page: 2, limit: 2, total: 5, totalPages: 3 },
    });
  });

  it.each([
    ['total=45&limit=20', { page: 1, limit: 20, total: 45, totalPages: 3 }],
    ['total=40&limit=20', { page: 1, limit: 20, total: 40, totalPages: 2 }],
    ['total=1&limit=100', { page: 1, limit: 100, total: 1, totalPages: 1 }],
    ['total=101&limit=100', { page: 1, limit: 100, total: 101, totalPages: 2 }],
    ['total=0', { page: 1, limit: 20, total: 0, totalPages: 0 }],
    ['total=0&page=3', { page: 3, limit: 20, total: 0, totalPages: 0 }],
  ])('for %s gives %j with totalPages rounded up', async (query, expected) => {
    const { pagination } = await page(query);
    expect(pagination).toEqual(expected);
    for (const value of Object.values(pagination)) expect(Number.isInteger(value)).toBe(true);
  });

  it('returns an empty data array when there are no items', async () => {
    const body = await page('total=0');
    expect(body.success).toBe(true);
    expect(body.data).toEqual([]);
  });
});
