/** Dates in the user's locale; amounts exactly as the API gives them (strings), never floats. */

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export interface Amount {
  amount: string;
  currency: string;
  exponent: number;
}

/**
 * `amount` is a decimal string with exactly `exponent` decimals ("12500.50"). Intl formats a
 * decimal string without passing through a float (ECMA-402 takes it as an exact decimal), so
 * minor units stay exact; a currency Intl does not know is shown as the string and its code.
 */
export function formatAmount({ amount, currency, exponent }: Amount): string {
  try {
    return new Intl.NumberFormat(undefined, {
      style: 'currency',
      currency,
      minimumFractionDigits: exponent,
      maximumFractionDigits: exponent,
    }).format(amount as unknown as number);
  } catch {
    return `${amount} ${currency}`;
  }
}

/** Basis points (10000 = 100 %) as a percentage, by string arithmetic. */
export function formatBasisPoints(bp: number): string {
  const whole = Math.trunc(bp / 100);
  const rest = String(bp % 100).padStart(2, '0');
  return `${whole}.${rest} %`;
}

/** An API decimal string ("20000.50") in minor units ("2000050"): its digits, by string arithmetic. */
export function minorUnits(amount: string): string {
  return amount.replace('.', '').replace(/^0+(?=\d)/, '');
}

/** Minor units ("2000050", as settlement reports give them) as the decimal string of `exponent`. */
export function decimalOf(minor: string, exponent: number): string {
  if (exponent === 0) return minor;
  const digits = minor.padStart(exponent + 1, '0');
  return `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

/**
 * What a person typed as an amount ("1500", "1500.5") in minor units for a currency of
 * `exponent` decimals ("150050"), by string arithmetic; null when it is not such an amount.
 */
export function parseToMinor(text: string, exponent: number): string | null {
  const match = /^(\d+)(?:\.(\d*))?$/.exec(text.trim());
  if (!match) return null;
  const fraction = match[2] ?? '';
  if (fraction.length > exponent) return null;
  return minorUnits(`${match[1]}${fraction.padEnd(exponent, '0')}`);
}

/** A decimal string the API gives without an exponent ("5001.00"): its own decimals are the exponent. */
export function formatDecimal(amount: string, currency: string): string {
  return formatAmount({ amount, currency, exponent: amount.split('.')[1]?.length ?? 0 });
}
