/** East Africa Time: UTC+3 all year (Kenya has no daylight saving). */
export const EAT_OFFSET_MS = 3 * 60 * 60 * 1000;

export type TimestampZone = 'EAT' | 'UTC';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The wall-clock fields of `date` in the zone: EAT (UTC+3) or UTC. */
function fields(date: Date, zone: TimestampZone) {
  const shifted = new Date(date.getTime() + (zone === 'EAT' ? EAT_OFFSET_MS : 0));
  return {
    year: shifted.getUTCFullYear(),
    month: shifted.getUTCMonth() + 1,
    day: shifted.getUTCDate(),
    hour: shifted.getUTCHours(),
    minute: shifted.getUTCMinutes(),
    second: shifted.getUTCSeconds(),
    ms: shifted.getUTCMilliseconds(),
  };
}

/** Daraja's `YYYYMMDDHHmmss` (STK Timestamp, TransactionDate, FinalisedTime). */
export function darajaTimestamp(date: Date, zone: TimestampZone = 'EAT'): string {
  const f = fields(date, zone);
  return `${f.year}${pad(f.month)}${pad(f.day)}${pad(f.hour)}${pad(f.minute)}${pad(f.second)}`;
}

/** B2C's `TransactionCompletedDateTime`: `DD.MM.YYYY HH:mm:ss` in EAT (e.g. `06.07.2024 22:48:52`). */
export function b2cCompletedDateTime(date: Date): string {
  const f = fields(date, 'EAT');
  return `${pad(f.day)}.${pad(f.month)}.${f.year} ${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)}`;
}

/** `DDMMYYYYHHmmssSSS` in EAT, the time part of a CheckoutRequestID. */
export function checkoutTimePart(date: Date): string {
  const f = fields(date, 'EAT');
  return `${pad(f.day)}${pad(f.month)}${f.year}${pad(f.hour)}${pad(f.minute)}${pad(f.second)}${pad(f.ms, 3)}`;
}

/**
 * Reads a `YYYYMMDDHHmmss` timestamp as wall-clock time in the zone; null when it is not
 * one (wrong length, non-digits, or fields out of range such as month 13 or 31 February).
 */
export function parseDarajaTimestamp(text: string, zone: TimestampZone): Date | null {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
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
    return null;
  }
  return new Date(utc - (zone === 'EAT' ? EAT_OFFSET_MS : 0));
}
