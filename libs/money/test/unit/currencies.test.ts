import {
  CURRENCY_EXPONENTS,
  currencyOfMarket,
  exponentOf,
  MARKET_CURRENCY,
  MARKETS,
  TOKEN_DECIMALS,
} from '@parametric/money';
import { z } from 'zod';

describe('currency registry', () => {
  it('holds the ISO 4217 exponents of our currencies', () => {
    expect(CURRENCY_EXPONENTS).toEqual({
      KES: 2,
      GHS: 2,
      USD: 2,
      UGX: 0,
      TZS: 2,
      RWF: 0,
      NGN: 2,
      XOF: 0,
    });
  });

  it('keeps USDC out of the ISO registry, with 6 decimals of its own', () => {
    expect(Object.keys(CURRENCY_EXPONENTS)).not.toContain('USDC');
    expect(TOKEN_DECIMALS).toEqual({ USDC: 6 });
  });

  it('cannot be changed at run time', () => {
    expect(Object.isFrozen(CURRENCY_EXPONENTS)).toBe(true);
    expect(Object.isFrozen(TOKEN_DECIMALS)).toBe(true);
    expect(Object.isFrozen(MARKET_CURRENCY)).toBe(true);
    expect(() => {
      (CURRENCY_EXPONENTS as Record<string, number>).EUR = 2;
    }).toThrow(TypeError);
    expect(exponentOf('EUR')).toBeUndefined();
  });
});

describe('exponentOf', () => {
  it.each([
    ['KES', 2],
    ['GHS', 2],
    ['USD', 2],
    ['UGX', 0],
    ['TZS', 2],
    ['RWF', 0],
    ['NGN', 2],
    ['XOF', 0],
    ['USDC', 6],
  ])('%s → %d', (currency, exponent) => {
    expect(exponentOf(currency)).toBe(exponent);
  });

  it.each(['EUR', 'kes', 'Kes', ' KES', '', 'constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'is undefined for %j',
    (currency) => {
      expect(exponentOf(currency)).toBeUndefined();
    },
  );
});

describe('markets', () => {
  it('maps Kenya to KES and Ghana to GHS', () => {
    expect(MARKET_CURRENCY).toEqual({ KE: 'KES', GH: 'GHS' });
    expect(currencyOfMarket('KE')).toBe('KES');
    expect(currencyOfMarket('GH')).toBe('GHS');
  });

  it('lists exactly the markets that have a currency', () => {
    expect([...MARKETS].sort()).toEqual(Object.keys(MARKET_CURRENCY).sort());
  });

  it('gives every market a currency with a registered exponent', () => {
    for (const market of MARKETS) expect(exponentOf(currencyOfMarket(market))).toBe(2);
  });

  it('works as a zod enum', () => {
    const market = z.enum(MARKETS);
    expect(market.parse('KE')).toBe('KE');
    expect(market.safeParse('NG').success).toBe(false);
    expect(market.safeParse('ke').success).toBe(false);
  });
});
