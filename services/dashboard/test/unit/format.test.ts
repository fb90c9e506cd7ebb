import { decimalOf, minorUnits, parseToMinor } from '../../src/format';

/** The dashboard's exact amount arithmetic (services/dashboard/src/format.ts): strings, never floats. */

it('takes an API decimal string to minor units', () => {
  expect(minorUnits('20000.00')).toBe('2000000');
  expect(minorUnits('0.05')).toBe('5');
  expect(minorUnits('0.00')).toBe('0');
  expect(minorUnits('1500')).toBe('1500');
  // Beyond a float's 15-16 significant digits, still exact.
  expect(minorUnits('98765432109876543.21')).toBe('9876543210987654321');
});

it('writes minor units as a decimal string of the currency exponent', () => {
  expect(decimalOf('2000000', 2)).toBe('20000.00');
  expect(decimalOf('5', 2)).toBe('0.05');
  expect(decimalOf('0', 2)).toBe('0.00');
  expect(decimalOf('1500', 0)).toBe('1500');
  expect(decimalOf('9876543210987654321', 2)).toBe('98765432109876543.21');
});

it('reads a typed amount in minor units, or refuses it', () => {
  expect(parseToMinor('20000', 2)).toBe('2000000');
  expect(parseToMinor(' 20000.5 ', 2)).toBe('2000050');
  expect(parseToMinor('0.1', 2)).toBe('10');
  expect(parseToMinor('0', 2)).toBe('0');
  expect(parseToMinor('12.', 2)).toBe('1200');
  expect(parseToMinor('1.005', 2)).toBeNull();
  expect(parseToMinor('-1', 2)).toBeNull();
  expect(parseToMinor('1e3', 2)).toBeNull();
  expect(parseToMinor('', 2)).toBeNull();
  expect(parseToMinor('1,000', 2)).toBeNull();
  expect(parseToMinor('7', 0)).toBe('7');
  expect(parseToMinor('7.5', 0)).toBeNull();
});
