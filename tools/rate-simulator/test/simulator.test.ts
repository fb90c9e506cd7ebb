import { eventually } from '@parametric/test-harness';
import { RATE_TIMESTAMP_HEADER, type RateSimulator, startRateSimulator } from '../src';
import { ratesUrl, request } from './helpers';

let simulator: RateSimulator;

beforeEach(async () => {
  simulator = await startRateSimulator();
});

afterEach(async () => {
  await simulator.close();
});

describe('GET /v2/exchange-rates (Coinbase’s shape)', () => {
  it('answers the default rate as a decimal string, with no timestamp header, and counts the request', async () => {
    expect(simulator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const answer = await request(ratesUrl(simulator.url));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers[RATE_TIMESTAMP_HEADER]).toBeUndefined();
    expect(JSON.parse(answer.body)).toEqual({
      data: { currency: 'USDC', rates: { KES: '129.45', USD: '1', USDC: '1' } },
    });
    expect(simulator.requests()).toBe(1);
  });

  it('takes the starting rate as an option, and the currency in any case', async () => {
    const other = await startRateSimulator({ kesPerUsdc: '130.1' });
    try {
      const answer = await request(ratesUrl(other.url, 'usdc'));
      expect(JSON.parse(answer.body).data.rates.KES).toBe('130.1');
    } finally {
      await other.close();
    }
  });

  it('refuses any base currency but USDC in Coinbase’s error shape (still counted)', async () => {
    const answer = await request(ratesUrl(simulator.url, 'BTC'));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({
      errors: [{ id: 'invalid_request', message: expect.stringContaining('Invalid currency (BTC)') }],
    });
    const missing = await request(`${simulator.url}/v2/exchange-rates`);
    expect(missing.status).toBe(400);
    expect(simulator.requests()).toBe(2);
  });

  it('answers 404 elsewhere and 405 for other methods, without counting them', async () => {
    expect((await request(`${simulator.url}/v2/prices`)).status).toBe(404);
    expect((await request(ratesUrl(simulator.url), { method: 'POST', body: {} })).status).toBe(405);
    expect(simulator.requests()).toBe(0);
  });
});

describe('the rate', () => {
  it('setRate serves any string verbatim (zero, negative, malformed) and asOf as X-Rate-Timestamp', async () => {
    for (const rate of ['0', '-129.45', 'abc', '1e3']) {
      simulator.setRate(rate);
      expect(JSON.parse((await request(ratesUrl(simulator.url))).body).data.rates.KES).toBe(rate);
    }
    const asOf = new Date('2026-11-22T10:00:00.000Z');
    simulator.setRate('131.5', { asOf });
    const answer = await request(ratesUrl(simulator.url));
    expect(answer.headers[RATE_TIMESTAMP_HEADER]).toBe('2026-11-22T10:00:00.000Z');
    simulator.setRate('131.5', { asOf: null });
    expect((await request(ratesUrl(simulator.url))).headers[RATE_TIMESTAMP_HEADER]).toBeUndefined();
  });

  it('setRate refuses an empty or overlong string and an invalid date', () => {
    expect(() => simulator.setRate('')).toThrow(TypeError);
    expect(() => simulator.setRate('1'.repeat(65))).toThrow(TypeError);
    expect(() => simulator.setRate('1', { asOf: new Date('nope') })).toThrow(TypeError);
  });

  it('PUT /_rate sets it over HTTP, with an optional asOf', async () => {
    const put = await request(`${simulator.url}/_rate`, {
      method: 'PUT',
      body: { kesPerUsdc: '128.00', asOf: '2026-11-22T09:59:00Z' },
    });
    expect(put.status).toBe(200);
    expect(JSON.parse(put.body)).toEqual({ kesPerUsdc: '128.00', asOf: '2026-11-22T09:59:00.000Z' });
    const answer = await request(ratesUrl(simulator.url));
    expect(JSON.parse(answer.body).data.rates.KES).toBe('128.00');
    expect(answer.headers[RATE_TIMESTAMP_HEADER]).toBe('2026-11-22T09:59:00.000Z');
  });

  it('PUT /_rate refuses a body without a string rate, or with a bad asOf', async () => {
    for (const body of [
      {},
      { kesPerUsdc: 129.45 },
      { kesPerUsdc: '' },
      { kesPerUsdc: '1', asOf: 'soon' },
      [1],
    ]) {
      const put = await request(`${simulator.url}/_rate`, { method: 'PUT', body });
      expect(put.status).toBe(400);
    }
    expect(JSON.parse((await request(ratesUrl(simulator.url))).body).data.rates.KES).toBe('129.45');
  });
});

describe('behaviours', () => {
  it('down answers 500 in Coinbase’s error shape', async () => {
    simulator.setBehaviour('down');
    const answer = await request(ratesUrl(simulator.url));
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body)).toEqual({
      errors: [{ id: 'internal_server_error', message: 'Internal server error' }],
    });
  });

  it('garbage answers 200 with an HTML page', async () => {
    const put = await request(`${simulator.url}/_behaviour`, { method: 'PUT', body: { mode: 'garbage' } });
    expect(JSON.parse(put.body)).toEqual({ mode: 'garbage' });
    const answer = await request(ratesUrl(simulator.url));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^text\/html/);
    expect(() => JSON.parse(answer.body)).toThrow();
  });

  it('hang never answers; close() drops the hanging request', async () => {
    simulator.setBehaviour('hang');
    const pending = request(ratesUrl(simulator.url));
    await eventually(() => expect(simulator.requests()).toBe(1));
    await simulator.close();
    await expect(pending).rejects.toThrow(/socket hang up|ECONNRESET/);
  });

  it('ok restores the normal answer; a bad mode is refused', async () => {
    simulator.setBehaviour('down');
    const bad = await request(`${simulator.url}/_behaviour`, { method: 'PUT', body: { mode: 'slow' } });
    expect(bad.status).toBe(400);
    expect(() => simulator.setBehaviour('slow' as never)).toThrow(TypeError);
    await request(`${simulator.url}/_behaviour`, { method: 'PUT', body: { mode: 'ok' } });
    expect((await request(ratesUrl(simulator.url))).status).toBe(200);
  });
});

describe('control API', () => {
  it('GET /_requests counts rate requests, in every mode', async () => {
    await request(ratesUrl(simulator.url));
    simulator.setBehaviour('down');
    await request(ratesUrl(simulator.url));
    simulator.setBehaviour('garbage');
    await request(ratesUrl(simulator.url));
    const answer = await request(`${simulator.url}/_requests`);
    expect(JSON.parse(answer.body)).toEqual({ count: 3 });
  });

  it('answers 405 for a wrong method on a control path', async () => {
    expect((await request(`${simulator.url}/_rate`)).status).toBe(405);
    expect((await request(`${simulator.url}/_requests`, { method: 'PUT', body: {} })).status).toBe(405);
  });
});
