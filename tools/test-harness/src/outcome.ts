import { AppError } from '@parametric/http';

/**
 * What a domain call answered: `{ ok: value }`, or the platform error it threw as
 * `{ code, message, details }` (what the error handler would render). Any other error is
 * rethrown, so a bug never passes for an expected refusal.
 */
export async function outcome<T>(call: Promise<T>) {
  try {
    return { ok: await call };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { code: err.code, message: err.message, details: err.details };
  }
}
