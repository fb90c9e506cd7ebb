import {
  type CallbackSink,
  type MpesaSimulatorOptions,
  startCallbackSink,
  startMpesaSimulator,
} from '@parametric/mpesa-simulator';
import { createDaraja, type Daraja, type DarajaConfig, DarajaError } from '../../../src/provider';

export const SIM = {
  consumerKey: 'payments-test-key',
  consumerSecret: 'payments-test-secret',
  shortcode: '174379',
  passkey: 'payments-test-passkey',
  b2cShortcode: '600000',
  initiatorName: 'payments-api',
  securityCredential: 'c2VjdXJpdHktY3JlZGVudGlhbA==',
} as const;

/** A clock moved by hand. */
export function manualClock(start = new Date('2026-03-01T09:00:00Z')) {
  let t = start.getTime();
  return {
    now: () => new Date(t),
    advance(ms: number) {
      t += ms;
    },
  };
}

export type Clock = ReturnType<typeof manualClock>;

/**
 * The simulator, a callback sink, and a Daraja client pointed at the simulator. Both run on
 * `clock` unless the test gives the simulator its own (`simClock`).
 */
export async function startDaraja(
  options: {
    sim?: Partial<MpesaSimulatorOptions>;
    config?: Partial<DarajaConfig>;
    clock?: Clock;
    simClock?: Clock;
  } = {},
) {
  const clock = options.clock ?? manualClock();
  const simClock = options.simClock ?? clock;
  const sim = await startMpesaSimulator({ ...SIM, callbackDelayMs: 20, now: simClock.now, ...options.sim });
  const sink: CallbackSink = await startCallbackSink();
  const daraja: Daraja = createDaraja(
    {
      baseUrl: sim.url,
      ...SIM,
      timeoutMs: 2000,
      breakerResetMs: 30_000,
      ...options.config,
    },
    { now: clock.now },
  );
  return {
    sim,
    sink,
    daraja,
    clock,
    simClock,
    /** Requests that reached the simulator, as `METHOD /path` (query string dropped). */
    calls: () => sim.requests().map((r) => `${r.method} ${r.path.split('?')[0]}`),
    async close() {
      await daraja.close();
      await sim.close();
      await sink.close();
    },
  };
}

export type Started = Awaited<ReturnType<typeof startDaraja>>;

/** The DarajaError a promise rejects with (fails the test if it resolves or throws something else). */
export async function darajaError(promise: Promise<unknown>): Promise<DarajaError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DarajaError) return err;
    throw err;
  }
  throw new Error('expected a DarajaError, but the call succeeded');
}

export const TOKEN = 'GET /oauth/v1/generate';
export const PUSH = 'POST /mpesa/stkpush/v1/processrequest';
export const QUERY = 'POST /mpesa/stkpushquery/v1/query';
export const B2C = 'POST /mpesa/b2c/v3/paymentrequest';
export const STATUS = 'POST /mpesa/transactionstatus/v1/query';

export function pushInput(sinkUrl: string, overrides: Partial<Parameters<Daraja['stkPush']>[0]> = {}) {
  return {
    amount: 120,
    phone: '+254711000001',
    accountReference: 'POL-8F2K1',
    description: 'Premium',
    callbackUrl: `${sinkUrl}/callbacks/stk`,
    ...overrides,
  };
}

let payoutCounter = 0;

export function payoutInput(sinkUrl: string, overrides: Partial<Parameters<Daraja['b2c']>[0]> = {}) {
  return {
    originatorConversationId: `po_${process.pid}_${++payoutCounter}`,
    amount: 2500,
    phone: '+254722000001',
    remarks: 'Drought payout',
    occasion: 'det_42',
    resultUrl: `${sinkUrl}/callbacks/b2c/result`,
    queueTimeoutUrl: `${sinkUrl}/callbacks/b2c/timeout`,
    ...overrides,
  };
}
