/** Conversions between our values and Daraja's wire formats. */

/** East Africa Time: UTC+3 all year (Kenya has no daylight saving). */
const EAT_OFFSET_MS = 3 * 60 * 60 * 1000;

export type TimestampZone = 'EAT' | 'UTC';

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYYMMDDHHmmss` wall-clock time in the zone (the STK `Timestamp`). */
export function darajaTimestamp(date: Date, zone: TimestampZone = 'EAT'): string {
  const d = new Date(date.getTime() + (zone === 'EAT' ? EAT_OFFSET_MS : 0));
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
}

/** The STK `Password`: base64(BusinessShortCode + Passkey + Timestamp). */
export function stkPassword(shortcode: string, passkey: string, timestamp: string): string {
  return Buffer.from(`${shortcode}${passkey}${timestamp}`, 'utf8').toString('base64');
}

function instant(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): Date | undefined {
  const utc = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(utc);
  if (
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    return undefined;
  }
  return new Date(utc - EAT_OFFSET_MS);
}

/** Reads Daraja's `YYYYMMDDHHmmss` (a number or a string; Safaricom's clock, EAT). */
export function fromDarajaTimestamp(value: string | number): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(String(value));
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  return instant(y, mo, d, h, mi, s);
}

/** Reads B2C's `TransactionCompletedDateTime`, `DD.MM.YYYY HH:mm:ss` (EAT). */
export function fromB2cDateTime(value: string): Date | undefined {
  const m = /^(\d{2})\.(\d{2})\.(\d{4}) (\d{2}):(\d{2}):(\d{2})$/.exec(value);
  if (!m) return undefined;
  const [d, mo, y, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  return instant(y, mo, d, h, mi, s);
}

/** A Kenyan Safaricom number as we hold it (`+2547XXXXXXXX` / `+2541XXXXXXXX`). */
const E164_KE = /^\+254[17]\d{8}$/;

/** `+254711000001` → `254711000001` (Daraja's PartyA / PhoneNumber / PartyB); null if not one. */
export function toDarajaPhone(phone: string): string | null {
  return E164_KE.test(phone) ? phone.slice(1) : null;
}

/** `254711000001` (a string or a number, as callbacks send it) → `+254711000001`; undefined if not one. */
export function fromDarajaPhone(value: string | number): string | undefined {
  const text = `+${String(value)}`;
  return E164_KE.test(text) ? text : undefined;
}
