import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { QUOTE_ROUTES } from '@parametric/contracts';
import {
  createApp,
  finishApp,
  mountRoutes,
  openApiDocument,
  organizationOf,
  requireInternalContext,
  signContext,
} from '@parametric/http';
import { createLogger } from '@parametric/logger';
import { type RateSimulator, startRateSimulator } from '@parametric/rate-simulator';
import { connectMongoose, type MongooseHandle } from '@parametric/test-harness';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { Router } from 'express';
import { quotesOf } from '../../src/quotes/domain';
import { quoteModel } from '../../src/quotes/model';
import type { RateSource } from '../../src/quotes/rates';
import { type QuoteContext, quoteRoutes } from '../../src/quotes/routes';
import { manualClock, rateSourceFor } from './support';

// The quote routes mounted as the payments service mounts them, behind the gateway's signed
// context, over HTTP.

const SECRET = 'test-internal-signing-secret-0123';

/** The routes' own OpenAPI document, to hold every response to it (closed objects). */
const document = openApiDocument({
  title: 'quotes',
  version: '1.0.0',
  description: 'quotes',
  serverUrl: '/api',
  routes: QUOTE_ROUTES,
  securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } },
});
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
addFormats(ajv);
ajv.addSchema(document as object, 'doc');

function expectDocumented(path: string, method: string, status: number, body: unknown) {
  const pointer = `/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/responses/${status}/content/application~1json/schema`;
  const validate = ajv.getSchema(`doc#${pointer}`);
  if (!validate) throw new Error(`${method.toUpperCase()} ${path} documents no ${status}`);
  expect({ valid: validate(body), errors: validate.errors ?? null }).toEqual({ valid: true, errors: null });
}

let mongo: MongooseHandle;
let simulator: RateSimulator;
let rates: RateSource;
let server: ReturnType<ReturnType<typeof createApp>['listen']>;
let base: string;
const clock = manualClock();

beforeAll(async () => {
  mongo = await connectMongoose('payments-quote-routes');
  const model = quoteModel(mongo.connection);
  await model.init();
  simulator = await startRateSimulator();
  rates = rateSourceFor(simulator.url, { now: clock.now, name: 'coinbase' });
  const logger = createLogger({ name: 'quotes-test', level: 'silent' });
  const app = createApp(logger);
  app.use(
    '/',
    requireInternalContext(SECRET),
    mountRoutes<QuoteContext>(Router(), quoteRoutes({ ttlSeconds: 300, rates, now: clock.now }), (req) => ({
      tenant: quotesOf(model, organizationOf(req)),
    })),
  );
  finishApp(app, logger);
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  server.closeAllConnections();
  await rates.close();
  await simulator.close();
  await mongo.close();
});

/** The envelope's fields the assertions read (the document check holds the rest). */
interface Envelope {
  data: Record<string, string> & { quoteId: string };
  error: { code: string; message: string; details?: unknown[] };
}

async function call(method: string, path: string, organizationId: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...signContext(
        { organizationId, role: 'ORG_ADMIN', requestId: 'quote-routes-test', issuedAt: Date.now() },
        SECRET,
      ),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Envelope };
}

describe('POST /payments/quote', () => {
  it('answers 201 with the quote, as documented', async () => {
    const org = randomUUID();
    const { status, body } = await call('POST', '/payments/quote', org, {
      amount: 1000,
      fromCurrency: 'KES',
      toCurrency: 'USDC',
    });
    expect(status).toBe(201);
    expectDocumented('/payments/quote', 'post', 201, body);
    expect(body.data).toMatchObject({
      amount: '1000.00',
      rate: '0.007724990343762070',
      convertedAmount: '7.724990',
      status: 'ACTIVE',
      source: 'coinbase',
    });

    const read = await call('GET', `/payments/quotes/${body.data.quoteId}`, org);
    expect(read.status).toBe(200);
    expectDocumented('/payments/quotes/{id}', 'get', 200, read.body);
    expect(read.body.data).toEqual(body.data);
  });

  it.each([
    [{ amount: 10.005, fromCurrency: 'KES', toCurrency: 'USDC' }, 'amount', 'at most 2 decimal places'],
    [{ amount: 0, fromCurrency: 'KES', toCurrency: 'USDC' }, 'amount', 'greater than 0'],
    [{ amount: 1e12 + 0.01, fromCurrency: 'KES', toCurrency: 'USDC' }, 'amount', 'at most'],
    [{ amount: '100', fromCurrency: 'KES', toCurrency: 'USDC' }, 'amount', 'must be a number'],
    [{ amount: 100, fromCurrency: 'USD', toCurrency: 'USDC' }, 'fromCurrency', 'must be KES'],
    [{ amount: 100, fromCurrency: 'KES', toCurrency: 'USDT' }, 'toCurrency', 'must be USDC'],
    [{ amount: 100, toCurrency: 'USDC' }, 'fromCurrency', 'must be KES'],
    [{ amount: 100, fromCurrency: 'KES', toCurrency: 'USDC', rate: '1' }, 'rate', 'Unknown field'],
  ])('refuses %j with 400 naming %s, never rounding', async (input, field, message) => {
    const before = simulator.requests();
    const { status, body } = await call('POST', '/payments/quote', randomUUID(), input);
    expect(status).toBe(400);
    expectDocumented('/payments/quote', 'post', 400, body);
    expect(body.error.code).toBe('INVALID_INPUT');
    expect(body.error.details).toContainEqual({ field, message: expect.stringContaining(message) });
    expect(simulator.requests()).toBe(before);
  });

  it('answers 502 PAYMENT_ERROR when no current rate can be had', async () => {
    clock.advance(30_000);
    simulator.setBehaviour('garbage');
    try {
      const { status, body } = await call('POST', '/payments/quote', randomUUID(), {
        amount: 100,
        fromCurrency: 'KES',
        toCurrency: 'USDC',
      });
      expect(status).toBe(502);
      expectDocumented('/payments/quote', 'post', 502, body);
      expect(body.error.code).toBe('PAYMENT_ERROR');
    } finally {
      simulator.setBehaviour('ok');
    }
  });
});

describe('GET /payments/quotes/{id}', () => {
  it('is 404 for another organization’s quote, exactly as for an unknown id', async () => {
    clock.advance(30_000);
    const created = await call('POST', '/payments/quote', randomUUID(), {
      amount: 5,
      fromCurrency: 'KES',
      toCurrency: 'USDC',
    });
    expect(created.status).toBe(201);
    const other = randomUUID();
    const foreign = await call('GET', `/payments/quotes/${created.body.data.quoteId}`, other);
    const unknown = await call('GET', `/payments/quotes/${randomUUID()}`, other);
    expect(foreign.status).toBe(404);
    expectDocumented('/payments/quotes/{id}', 'get', 404, foreign.body);
    expect(foreign.body).toEqual(unknown.body);
  });

  it('is 400 for an id that is not a uuid', async () => {
    const { status, body } = await call('GET', '/payments/quotes/not-a-uuid', randomUUID());
    expect(status).toBe(400);
    expect(body.error.details).toEqual([{ field: 'id', message: 'must be a uuid' }]);
  });
});
