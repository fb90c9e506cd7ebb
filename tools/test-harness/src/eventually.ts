import { types } from 'node:util';

export interface EventuallyOptions {
  /** Give up after this many milliseconds (default 10 000). */
  timeout?: number;
  /** Pause between attempts in milliseconds (default 50). */
  interval?: number;
  /** What was awaited; leads the timeout error's message. */
  message?: string;
}

type Outcome<T> = { kind: 'returned'; value: T } | { kind: 'threw'; error: unknown } | { kind: 'pending' };

/**
 * Calls `fn` until it returns without throwing (typically a jest `expect` that fails until
 * the system under test catches up) and resolves with what it returned. After `timeout` it
 * rejects with an Error naming the last failure, so the test reports what it last saw rather
 * than a bare jest timeout. An attempt still running at the deadline is abandoned, not awaited.
 */
export async function eventually<T>(
  fn: () => T | Promise<T>,
  { timeout = 10_000, interval = 50, message }: EventuallyOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeout;
  // Taken now, while the caller is on the stack, so a timeout points at the test's line.
  const callSite = new Error();
  Error.captureStackTrace(callSite, eventually);
  let lastError: { error: unknown } | undefined;
  for (let attempts = 1; ; attempts++) {
    const outcome = await attemptBefore(fn, deadline);
    if (outcome.kind === 'returned') return outcome.value;
    if (outcome.kind === 'threw') lastError = { error: outcome.error };
    // Give up when the deadline cut an attempt off, or leaves no room for a pause and another.
    if (outcome.kind === 'pending' || deadline - Date.now() < interval) {
      const last = lastError ? `last error: ${describeFailure(lastError.error)}` : 'no attempt finished';
      const seen =
        outcome.kind === 'pending' ? `attempt ${attempts} still running at the deadline; ${last}` : last;
      const failure = new Error(
        `${message ? `${message}: ` : ''}not satisfied within ${timeout} ms (${attempts} attempts); ${seen}`,
        { cause: lastError?.error },
      );
      failure.stack = `Error: ${failure.message}${callSite.stack?.slice(callSite.stack.indexOf('\n')) ?? ''}`;
      throw failure;
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** One call of `fn`, raced against the deadline; the race's timer is always cleared. */
async function attemptBefore<T>(fn: () => T | Promise<T>, deadline: number): Promise<Outcome<T>> {
  const attempt = Promise.resolve()
    .then(fn)
    .then(
      (value): Outcome<T> => ({ kind: 'returned', value }),
      (error: unknown): Outcome<T> => ({ kind: 'threw', error }),
    );
  let timer: NodeJS.Timeout | undefined;
  const cutOff = new Promise<Outcome<T>>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'pending' }), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([attempt, cutOff]);
  } finally {
    clearTimeout(timer);
  }
}

/** An Error's message, or a thrown non-Error as JSON. */
function describeFailure(error: unknown): string {
  // isNativeError, not instanceof: errors from node's core modules come from another realm
  // than jest's test context.
  if (types.isNativeError(error) || error instanceof Error) return error.message;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
