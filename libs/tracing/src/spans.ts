import {
  currentTrace,
  formatTraceparent,
  newSpanId,
  newTraceId,
  parseTraceparent,
  runInTrace,
  type TraceCarrier,
  type TraceContext,
} from './context';

export type SpanKind = 'server' | 'client' | 'producer' | 'consumer' | 'internal';
export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** One unit of work of this process in a trace: a request handled, a job, a call out. */
export interface Span {
  readonly context: TraceContext;
  setAttribute(key: string, value: string | number | boolean): void;
  /** Ends the span; `error` marks it failed (exported spans only; a no-op without export). */
  end(error?: string): void;
}

/** What records spans when export is on (otel.ts); without it, spans are only ids. */
export interface SpanBackend {
  start(
    name: string,
    kind: SpanKind,
    parent: { traceId: string; parentId: string } | undefined,
    attributes: SpanAttributes | undefined,
  ): {
    traceId: string;
    spanId: string;
    setAttribute(key: string, value: string | number | boolean): void;
    end(error?: string): void;
  };
}

let backend: SpanBackend | undefined;

/** Installed by `startOtel`; `undefined` again on its shutdown. */
export function setSpanBackend(next: SpanBackend | undefined): void {
  backend = next;
}

/** Whether spans are being exported (OTLP on). */
export function exporting(): boolean {
  return backend !== undefined;
}

const noop = () => {};

/**
 * Starts a span: the child of `parent` (a `traceparent` taken from a request or a job), or
 * of a new trace when there is none or it is malformed. Without export this costs two ids.
 */
export function startSpan(
  name: string,
  kind: SpanKind,
  options: {
    parent?: { traceId: string; parentId: string };
    reqId?: string;
    attributes?: SpanAttributes;
  } = {},
): Span {
  const { parent, reqId } = options;
  if (!backend) {
    const context: TraceContext = { traceId: parent?.traceId ?? newTraceId(), spanId: newSpanId(), reqId };
    return { context, setAttribute: noop, end: noop };
  }
  const recorded = backend.start(name, kind, parent, options.attributes);
  return {
    context: { traceId: recorded.traceId, spanId: recorded.spanId, reqId },
    setAttribute: (key, value) => recorded.setAttribute(key, value),
    end: (error) => recorded.end(error),
  };
}

/**
 * Runs `fn` as a span continuing `carrier` (a job's or a stored entry's), or a new trace when
 * there is none: for work that does not come in over HTTP (jobs, deliveries).
 */
export async function runContinuing<T>(
  carrier: TraceCarrier | undefined,
  name: string,
  kind: SpanKind,
  fn: () => Promise<T>,
  attributes?: SpanAttributes,
): Promise<T> {
  const span = startSpan(name, kind, {
    parent: parseTraceparent(carrier?.traceparent),
    reqId: carrier?.requestId,
    attributes,
  });
  try {
    const result = await runInTrace(span.context, fn);
    span.end();
    return result;
  } catch (err) {
    span.end(err instanceof Error ? err.message : String(err));
    throw err;
  }
}

/**
 * A call to another process (a service, a partner, a provider): `fn` gets the `traceparent`
 * to send, or undefined outside any trace. With export on, the call is its own client span
 * (and the header names it); without, the header names the current span.
 */
export async function outbound<T>(
  name: string,
  fn: (traceparent: string | undefined) => Promise<T>,
  attributes?: SpanAttributes,
): Promise<T> {
  const current = currentTrace();
  if (!current) return fn(undefined);
  if (!backend) return fn(formatTraceparent(current.traceId, current.spanId));
  const span = backend.start(
    name,
    'client',
    { traceId: current.traceId, parentId: current.spanId },
    attributes,
  );
  try {
    const result = await fn(formatTraceparent(span.traceId, span.spanId));
    span.end();
    return result;
  } catch (err) {
    span.end(err instanceof Error ? err.message : String(err));
    throw err;
  }
}
