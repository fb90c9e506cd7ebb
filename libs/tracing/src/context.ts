import { AsyncLocalStorage } from 'node:async_hooks';
import { randomFillSync } from 'node:crypto';

/**
 * The trace of the request or job being handled: a W3C trace id (32 hex), the id of this
 * process's span for it (16 hex), and the request id (`x-request-id`) of the request that
 * started the work, when there was one. Logged on every line (`traceId`, `spanId`, `reqId`).
 */
export interface TraceContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly reqId: string | undefined;
}

/** What travels with work to the next hop: a W3C `traceparent` and the request id. */
export interface TraceCarrier {
  traceparent: string;
  requestId?: string;
}

const storage = new AsyncLocalStorage<TraceContext>();

/** The trace of the request or job this code runs for, if any. */
export function currentTrace(): TraceContext | undefined {
  return storage.getStore();
}

/** Runs `fn` (and everything it starts) as part of `context`. */
export function runInTrace<T>(context: TraceContext, fn: () => T): T {
  return storage.run(context, fn);
}

/** Fields for a log line (pino `mixin`): a new object each call, pino merges into it. */
export function traceLogFields(): { traceId?: string; spanId?: string; reqId?: string } {
  const context = storage.getStore();
  if (!context) return {};
  return context.reqId === undefined
    ? { traceId: context.traceId, spanId: context.spanId }
    : { traceId: context.traceId, spanId: context.spanId, reqId: context.reqId };
}

// version 00, lower-case hex only (the spec's), trace id and parent id not all zeros.
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const ZERO_TRACE = '00000000000000000000000000000000';
const ZERO_SPAN = '0000000000000000';

/** A `traceparent` of version 00 as the spec reads it, or undefined (then a new trace starts). */
export function parseTraceparent(value: unknown): { traceId: string; parentId: string } | undefined {
  if (typeof value !== 'string' || value.length !== 55) return undefined;
  const match = TRACEPARENT.exec(value);
  if (!match) return undefined;
  const traceId = match[1] as string;
  const parentId = match[2] as string;
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return undefined;
  return { traceId, parentId };
}

/**
 * The `traceparent` naming `spanId` as the parent. Always flagged sampled (`01`): whether a
 * span is exported is decided here, by `OTEL_EXPORTER_OTLP_ENDPOINT`, never by a caller's flags.
 */
export function formatTraceparent(traceId: string, spanId: string): string {
  return `00-${traceId}-${spanId}-01`;
}

/** The carrier for work started now (a job, an outbox entry), or undefined outside any trace. */
export function currentCarrier(): TraceCarrier | undefined {
  const context = storage.getStore();
  if (!context) return undefined;
  return context.reqId === undefined
    ? { traceparent: formatTraceparent(context.traceId, context.spanId) }
    : { traceparent: formatTraceparent(context.traceId, context.spanId), requestId: context.reqId };
}

// Ids from a pooled buffer: one randomFillSync per 512 spans instead of one per id.
const POOL_BYTES = 8192;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

function randomHex(bytes: number): string {
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

/** A new random trace id (never all zeros in practice: 128 random bits). */
export const newTraceId = (): string => randomHex(16);
/** A new random span id. */
export const newSpanId = (): string => randomHex(8);
