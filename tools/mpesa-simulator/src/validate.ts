/**
 * Field checks as Daraja's API gateway makes them before accepting a request. A failed
 * check is a Daraja error body: `400.002.02` "Bad Request - Invalid <Field>".
 */

export interface DarajaFailure {
  status: number;
  errorCode: string;
  errorMessage: string;
}

export const invalid = (field: string): DarajaFailure => ({
  status: 400,
  errorCode: '400.002.02',
  errorMessage: `Bad Request - Invalid ${field}`,
});

/** A Safaricom customer number: 2547XXXXXXXX or 2541XXXXXXXX (12 digits, no '+'). */
export const MSISDN = /^254[17]\d{8}$/;
/** A shortcode (paybill, till, B2C): 5 to 9 digits. */
export const SHORTCODE = /^\d{5,9}$/;

/** Daraja accepts numeric fields as JSON numbers or digit strings. */
export function digits(value: unknown): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value === 'string' && /^\d+$/.test(value)) return value;
  return null;
}

/** A whole, positive amount (a JSON number or a digit string); null otherwise. */
export function wholeAmount(value: unknown): number | null {
  const text = digits(value);
  if (text === null) return null;
  const amount = Number(text);
  return Number.isSafeInteger(amount) && amount > 0 ? amount : null;
}

export function httpUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

export function text(value: unknown, min: number, max: number): string | null {
  if (typeof value !== 'string') return null;
  return value.length >= min && value.length <= max ? value : null;
}
