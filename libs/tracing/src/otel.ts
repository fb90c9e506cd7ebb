import { type SpanBackend, type SpanKind, setSpanBackend } from './spans';

export interface OtelOptions {
  /** `OTEL_EXPORTER_OTLP_ENDPOINT`: the collector's base URL; spans go to `<endpoint>/v1/traces`. */
  endpoint: string;
  /** `service.name` of the exported spans. */
  serviceName: string;
}

export interface Otel {
  /** Exports what is still buffered, then stops exporting (spans become ids only again). */
  shutdown(): Promise<void>;
}

/**
 * Turns on span export over OTLP/HTTP (JSON). Loaded only when called, so a service without
 * `OTEL_EXPORTER_OTLP_ENDPOINT` neither loads the SDK nor makes a request. Our own
 * AsyncLocalStorage (context.ts) stays the one current context: spans are started with their
 * parent given explicitly, so the SDK's context manager and global registration are not used,
 * and log lines and exported spans carry the same trace and span ids by construction.
 */
export async function startOtel(options: OtelOptions): Promise<Otel> {
  // Required here, not imported at the top: loading the SDK is part of turning export on.
  const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const { TracerProvider, BatchSpanProcessor, AlwaysOnSampler } =
    require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } =
    require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');

  const provider = new TracerProvider({
    // We decide what is recorded, not the caller's flags (a partner's `traceparent` may say 00).
    sampler: new AlwaysOnSampler(),
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` }),
        scheduledDelayMillis: 1000,
      }),
    ],
  });
  const tracer = provider.getTracer('@parametric/tracing');
  const kinds: Record<SpanKind, number> = {
    server: api.SpanKind.SERVER,
    client: api.SpanKind.CLIENT,
    producer: api.SpanKind.PRODUCER,
    consumer: api.SpanKind.CONSUMER,
    internal: api.SpanKind.INTERNAL,
  };

  const backend: SpanBackend = {
    start(name, kind, parent, attributes) {
      const parentContext = parent
        ? api.trace.setSpanContext(api.ROOT_CONTEXT, {
            traceId: parent.traceId,
            spanId: parent.parentId,
            traceFlags: api.TraceFlags.SAMPLED,
            isRemote: true,
          })
        : api.ROOT_CONTEXT;
      const span = tracer.startSpan(
        name,
        { kind: kinds[kind], attributes: clean(attributes) },
        parentContext,
      );
      const { traceId, spanId } = span.spanContext();
      return {
        traceId,
        spanId,
        setAttribute: (key, value) => span.setAttribute(key, value),
        end(error) {
          if (error !== undefined) span.setStatus({ code: api.SpanStatusCode.ERROR, message: error });
          span.end();
        },
      };
    },
  };
  setSpanBackend(backend);
  return {
    async shutdown() {
      setSpanBackend(undefined);
      await provider.shutdown();
    },
  };
}

function clean(attributes: Record<string, string | number | boolean | undefined> | undefined) {
  if (!attributes) return undefined;
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}
