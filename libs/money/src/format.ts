import { exponentOf } from './currencies';
import { formatMinor } from './decimal';
import { MoneyError } from './errors';

/**
 * An amount for people to read: "KES 1,234.50", "KES -0.05", "UGX 1,500", "USDC 2.500000".
 * Always every decimal of the currency, so two amounts line up and nothing looks rounded.
 * Hand-rolled rather than Intl.NumberFormat: Intl takes numbers (or, on newer engines only,
 * decimal strings), and its output depends on the ICU data the runtime ships.
 */
export function formatMoney(minor: bigint, currency: string): string {
  const exponent = exponentOf(currency);
  if (exponent === undefined) {
    throw new MoneyError(
      'CURRENCY_EXPONENT_UNREGISTERED',
      `no minor-unit exponent registered for ${currency}`,
    );
  }
  const decimal = formatMinor(minor, exponent);
  const [, sign = '', whole = '', fraction = ''] = /^(-?)(\d+)(\.\d+)?$/.exec(decimal) ?? [];
  return `${currency} ${sign}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${fraction}`;
}
