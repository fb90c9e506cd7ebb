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
