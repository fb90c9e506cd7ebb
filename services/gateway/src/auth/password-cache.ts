import { createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../clock';

/** How long a checked email and password are taken again without another scrypt. */
export const PASSWORD_CACHE_MS = 60_000;
const MAX_ENTRIES = 1_000;

export interface PasswordCacheDeps<O extends { _id: string }> {
  operators: {
    /** The operators' own check (operators/domain.ts `verify`): throttle, scrypt, `ACTIVE`. Throws when refused. */
    verify(input: { email: string; password: string }, clientIp: string): Promise<O>;
    /** The operator while `ACTIVE`, read afresh (operators/domain.ts `active`). */
    active(id: string): Promise<O | undefined>;
  };
  clock: Clock;
}

/**
 * HTTP Basic with an operator's email and password on the queue dashboard (curl sends them on
 * every request): checked once through the operators' sign-in rules and throttle, then taken
 * for `PASSWORD_CACHE_MS` without another scrypt. The cache is keyed by an HMAC of the email and
 * password under a key made when the process starts (never the password, nor a hash anyone could
 * test guesses against offline), and holds only the operator's id: each request still reads the
 * operator, so deactivation stops them at once and a role change applies at once.
 */
export function passwordCache<O extends { _id: string }>(deps: PasswordCacheDeps<O>) {
  const key = randomBytes(32);
  const checked = new Map<string, { operatorId: string; until: number }>();
  // Length-prefixed, so no two (email, password) pairs share an input.
  const idOf = (email: string, password: string) =>
    createHmac('sha256', key).update(`${email.length}:${email}:${password}`).digest('base64url');
  return {
    /** The operator, or `undefined` when a cached success's operator is no longer `ACTIVE`. */
    async operator(email: string, password: string, clientIp: string): Promise<O | undefined> {
      const now = deps.clock().getTime();
      const id = idOf(email, password);
      const hit = checked.get(id);
      if (hit && hit.until > now) {
        const operator = await deps.operators.active(hit.operatorId);
        if (!operator) checked.delete(id);
        return operator;
      }
      if (hit) checked.delete(id);
      const operator = await deps.operators.verify({ email, password }, clientIp);
      if (checked.size >= MAX_ENTRIES) {
        for (const [stale, entry] of checked) if (entry.until <= now) checked.delete(stale);
        // Still full of live entries: the oldest goes (its next request checks the password again).
        if (checked.size >= MAX_ENTRIES) checked.delete(checked.keys().next().value as string);
      }
      checked.set(id, { operatorId: operator._id, until: now + PASSWORD_CACHE_MS });
      return operator;
    },
  };
}
