import { createIds, createReceipts } from './ids';
import type {
  B2cTransaction,
  Fault,
  RecordedRequest,
  SentCallback,
  SimulatedTransaction,
  StkTransaction,
} from './types';

/**
 * Everything one simulator remembers. The handlers read and change it; nothing else holds
 * mutable state.
 */
export interface State {
  /** Daraja-shaped identifiers and M-Pesa receipts, unique within this simulator. */
  readonly ids: ReturnType<typeof createIds>;
  readonly receipt: () => string;
  /** Requests received and callbacks sent since start or the last `reset()`. */
  requests: RecordedRequest[];
  callbacks: SentCallback[];
  /** Number of the last request received (never reset). */
  seq: number;
  /** Access token -> when it expires (ms since the epoch). */
  readonly tokens: Map<string, number>;
  /** When the Daraja requests of the last second were accepted (spike arrest). */
  readonly acceptedAt: number[];
  /** Forced answers for the next requests (`failNext`). */
  readonly faults: Fault[];
  /** Every STK push, B2C payment and status query accepted, oldest first. */
  readonly transactions: SimulatedTransaction[];
  readonly stkByCheckout: Map<string, StkTransaction>;
  /** B2C payments by OriginatorConversationID: an ID used once is refused after. */
  readonly b2cByOcid: Map<string, B2cTransaction>;
  /** Completed STK pushes and every B2C payment, by receipt (Transaction Status looks here). */
  readonly byReceipt: Map<string, StkTransaction | B2cTransaction>;
  /** B2C attempts per customer number since start or the last `reset()` (scripted outcomes). */
  b2cAttempts: Map<string, number>;
  /** The B2C organisation's balances, reported in B2C results. */
  readonly funds: { utility: number; working: number; chargesPaid: number };
}

export function createState(): State {
  return {
    ids: createIds(),
    receipt: createReceipts(),
    requests: [],
    callbacks: [],
    seq: 0,
    tokens: new Map(),
    acceptedAt: [],
    faults: [],
    transactions: [],
    stkByCheckout: new Map(),
    b2cByOcid: new Map(),
    byReceipt: new Map(),
    b2cAttempts: new Map(),
    funds: { utility: 5_000_000, working: 1_000_000, chargesPaid: 0 },
  };
}

/** Forgets recorded requests and callbacks and the B2C attempt counts; the rest stays. */
export function resetRecordings(state: State): void {
  state.requests = [];
  state.callbacks = [];
  state.b2cAttempts = new Map();
}
