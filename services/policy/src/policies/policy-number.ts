import { randomBytes } from 'node:crypto';

/** No 0/O, 1/I/L: numbers are read out over the phone. */
const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/** Readable and unique: market, year-month, six random characters (e.g. KE-202611-7K3Q9X). */
export function newPolicyNumber(market: string, now: Date): string {
  const random = [...randomBytes(6)].map((b) => ALPHABET[b % ALPHABET.length]).join('');
  return `${market}-${now.toISOString().slice(0, 7).replace('-', '')}-${random}`;
}
