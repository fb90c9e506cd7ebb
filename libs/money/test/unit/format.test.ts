import { decimalString, formatMoney } from '@parametric/money';
import { expectMoneyError, moneyErrorOf } from './expect-money-error';

describe('formatMoney', () => {
  it.each([
    [123_450n, 'KES', 'KES 1,234.50'],
    [0n, 'KES', 'KES 0.00'],
    [-5n, 'KES', 'KES -0.05'],
    [99_999n, 'KES', 'KES 999.99'],
    [100_000n, 'KES', 'KES 1,000.00'],
    [100_000_000n, 'KES', 'KES 1,000,000.00'],
    [-123_456_789n, 'GHS', 'GHS -1,234,567.89'],
    [150n, 'UGX', 'UGX 150'],
    [1500n, 'UGX', 'UGX 1,500'],
    [-1_000_000n, 'XOF', 'XOF -1,000,000'],
    [2_500_000n, 'USDC', 'USDC 2.500000'],
    [1_234_567_890_123n, 'USDC', 'USDC 1,234,567.890123'],
    [10n ** 30n, 'KES', 'KES 10,000,000,000,000,000,000,000,000,000.00'],
  ])('%p %s → %j', (minor, currency, text) => {
    expect(formatMoney(minor, currency)).toBe(text);
  });

  it.each(['EUR', 'kes', ''])('refuses unregistered currency %j', (currency) => {
    const error = moneyErrorOf(() => formatMoney(1n, currency));
    expect(error.code).toBe('CURRENCY_EXPONENT_UNREGISTERED');
    expect(error.name).toBe('MoneyError');
    expect(error).toBeInstanceOf(Error);
  });
});

describe('decimalString', () => {
  it('accepts up to the exponent’s decimals and nothing else', () => {
    const kes = decimalString(2);
    for (const ok of ['1234.56', '1234.5', '1234', '-0.05', '0'])
      expect(kes.safeParse(ok).success).toBe(true);
    for (const bad of ['1234.567', '1.', '.5', '1e3', '1,000', '', ' 1']) {
      expect(kes.safeParse(bad).success).toBe(false);
    }
    expect(kes.safeParse(12).success).toBe(false);
  });

  it('takes whole numbers only for exponent 0', () => {
    const ugx = decimalString(0);
    expect(ugx.safeParse('1500').success).toBe(true);
    expect(ugx.safeParse('1500.0').success).toBe(false);
  });

  it('says what is wrong', () => {
    const result = decimalString(6).safeParse('1.1234567');
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toContain('at most 6 decimal places');
  });

  it('refuses a bad exponent when the schema is built', () => {
    expectMoneyError(() => decimalString(19), 'INVALID_EXPONENT');
  });
});
