import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { AppError } from '@parametric/http';
import { COMMON_PASSWORDS } from './common-passwords';

/**
 * scrypt (RFC 7914), memory-hard, from node's own crypto: no native package to build.
 * N = 2^15, r = 8, p = 1 uses 32 MiB and about 100 ms of one core per hash here; OWASP's
 * password storage guidance lists N=2^17 r=8 p=1 as its first choice and N=2^15 among the
 * equivalent settings with lower memory. The parameters travel in each stored hash, so
 * raising them later re-hashes on the next sign-in without a migration.
 */
export const SCRYPT = { logN: 15, r: 8, p: 1, keyLength: 32, saltLength: 16 } as const;

const PREFIX = 'scrypt';

function derive(password: string, salt: Buffer, logN: number, r: number, p: number, keyLength: number) {
  const N = 2 ** logN;
  return new Promise<Buffer>((resolve, reject) =>
    scryptCallback(
      password.normalize('NFKC'),
      salt,
      keyLength,
      { N, r, p, maxmem: 256 * N * r },
      (err, key) => (err ? reject(err) : resolve(key)),
    ),
  );
}

/** `scrypt$<logN>$<r>$<p>$<salt>$<hash>` (base64url): what the users collection stores. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SCRYPT.saltLength);
  const key = await derive(password, salt, SCRYPT.logN, SCRYPT.r, SCRYPT.p, SCRYPT.keyLength);
  return [
    PREFIX,
    SCRYPT.logN,
    SCRYPT.r,
    SCRYPT.p,
    salt.toString('base64url'),
    key.toString('base64url'),
  ].join('$');
}

const STORED = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9_-]{16,64})\$([A-Za-z0-9_-]{32,128})$/;

/** Constant-time check of a password against a stored hash; a malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = STORED.exec(stored);
  if (!match) return false;
  const [, logN, r, p, salt, hash] = match as unknown as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(
    password,
    Buffer.from(salt, 'base64url'),
    Number(logN),
    Number(r),
    Number(p),
    expected.length,
  );
  return timingSafeEqual(actual, expected);
}

/** Whether a stored hash was made with weaker parameters than today's. */
export function needsRehash(stored: string): boolean {
  const match = STORED.exec(stored);
  return !match || Number(match[1]) < SCRYPT.logN || Number(match[2]) < SCRYPT.r;
}

/**
 * A hash of a random password nobody knows, made once per process: sign-in checks the
 * password against it when there is no real hash (unknown email, invited or deactivated
 * user), so every failure costs the same scrypt and looks the same from outside.
 */
export function dummyHash(): Promise<string> {
  return hashPassword(randomBytes(32).toString('base64url'));
}

/**
 * The new-password rules beyond length (checked by the route's schema): not a common
 * password, and not the person's own email. `400 INVALID_INPUT` on `field`.
 */
export function assertAcceptablePassword(password: string, email: string | undefined, field: string): void {
  const folded = password.normalize('NFKC').toLowerCase();
  const problem = (message: string) => AppError.invalid('Password is not acceptable', [{ field, message }]);
  if (COMMON_PASSWORDS.has(folded)) throw problem('is a commonly used password; choose another');
  if (/^(.)\1+$/u.test(folded)) throw problem('is one character repeated; choose another');
  if (email) {
    const local = email.split('@')[0] ?? '';
    if (folded === email || (local.length >= 4 && folded.includes(local))) {
      throw problem('must not be your email address, nor contain the part of it before the @');
    }
  }
}
