export {
  currentCarrier,
  currentTrace,
  formatTraceparent,
  newSpanId,
  newTraceId,
  parseTraceparent,
  runInTrace,
  type TraceCarrier,
  type TraceContext,
  traceLogFields,
} from './context';
export { type Otel, type OtelOptions, startOtel } from './otel';
export {
  exporting,
  outbound,
  runContinuing,
  type Span,
  type SpanAttributes,
  type SpanBackend,
  type SpanKind,
  setSpanBackend,
  startSpan,
} from './spans';
