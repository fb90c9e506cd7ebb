import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createCallbackSender } from './callbacks';
import type { Context } from './context';
import { createSimulatorServer } from './server';
import { settingsOf } from './settings';
import { createState, resetRecordings } from './state';
import type { MpesaSimulator, MpesaSimulatorOptions } from './types';

export type {
  B2cTransaction,
  CallbackKind,
  Fault,
  MpesaSimulator,
  MpesaSimulatorOptions,
  RecordedRequest,
  SentCallback,
  SimulatedTransaction,
  StatusQueryTransaction,
  StkTransaction,
  TransactionState,
} from './types';

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * A local Safaricom Daraja: the OAuth token route, STK push and query, B2C and Transaction
 * Status, validating requests as Daraja does and POSTing its callbacks, with outcomes
 * scripted by phone number (see the README). The state is in state.ts, one handler module per
 * Daraja API under api/, the HTTP wiring in server.ts and the callbacks in callbacks.ts.
 */
export async function startMpesaSimulator(options: MpesaSimulatorOptions): Promise<MpesaSimulator> {
  const settings = settingsOf(options);
  const state = createState();
  const events = new EventEmitter();
  const callbacks = createCallbackSender({
    state,
    delayMs: settings.callbackDelayMs,
    now: settings.now,
    events,
  });
  const ctx: Context = { settings, state, callbacks };
  let closed = false;

  const snapshot = <T>(value: T): T => structuredClone(value);
  const server = createSimulatorServer(ctx, events, {
    reset: () => handle.reset(),
    failNext: (count, fault) => handle.failNext(count, fault),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const actualPort = (server.address() as AddressInfo).port;

  const handle: MpesaSimulator = {
    url: `http://${urlHost(settings.host)}:${actualPort}`,
    port: actualPort,
    requests: () => snapshot(state.requests),
    callbacks: () => snapshot(state.callbacks),
    transactions: () => snapshot(state.transactions),
    reset() {
      resetRecordings(state);
    },
    failNext(count, fault = {}) {
      for (let i = 0; i < count; i++) state.faults.push({ ...fault });
    },
    onRequest(listener) {
      events.on('request', listener);
      return () => events.off('request', listener);
    },
    onCallback(listener) {
      events.on('callback', listener);
      return () => events.off('callback', listener);
    },
    async close() {
      if (closed) return;
      closed = true;
      await callbacks.close();
      events.removeAllListeners();
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await stopped;
    },
  };
  return handle;
}
