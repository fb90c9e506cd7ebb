import type { EventEmitter } from 'node:events';
import type { State } from './state';
import type { CallbackKind, SentCallback } from './types';

const CALLBACK_TIMEOUT_MS = 10_000;

/** Decides outcomes later and POSTs Daraja's callbacks, as Daraja does, asynchronously. */
export interface CallbackSender {
  /** Runs `fn` (an outcome and its callbacks) after the callback delay, unless closed by then. */
  later(fn: () => Promise<void> | void): void;
  /** POSTs one callback, recording it (and the receiver's answer) in the state. */
  post(kind: CallbackKind, url: string, body: unknown): Promise<void>;
  /** Cancels what is still to run and aborts deliveries in flight; resolves once they ended. */
  close(): Promise<void>;
}

export function createCallbackSender(options: {
  state: State;
  delayMs: number;
  now: () => Date;
  /** Emits `callback` with each SentCallback once answered (or failed). */
  events: EventEmitter;
}): CallbackSender {
  const { state, delayMs, now, events } = options;
  const timers = new Set<NodeJS.Timeout>();
  const deliveries = new Set<Promise<void>>();
  const closing = new AbortController();
  let closed = false;

  return {
    later(fn) {
      if (closed) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        const run = Promise.resolve()
          .then(fn)
          .catch(() => {
            // A failed delivery is recorded on its SentCallback; nothing else to do.
          });
        deliveries.add(run);
        void run.finally(() => deliveries.delete(run));
      }, delayMs);
      timers.add(timer);
    },

    async post(kind, url, body) {
      if (closed) return;
      const entry: SentCallback = { kind, url, body, sentAt: now().toISOString(), status: null };
      state.callbacks.push(entry);
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.any([closing.signal, AbortSignal.timeout(CALLBACK_TIMEOUT_MS)]),
        });
        await response.arrayBuffer().catch(() => undefined);
        entry.status = response.status;
      } catch (error) {
        entry.error = (error as Error).message;
      }
      events.emit('callback', entry);
    },

    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      closing.abort();
      await Promise.allSettled([...deliveries]);
    },
  };
}
