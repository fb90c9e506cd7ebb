import { traceLogFields } from '@parametric/tracing';
import pino, { type Logger } from 'pino';
import { redacted } from './redact';

export type { Logger } from 'pino';
export { CENSOR, redacted, SECRET_FIELDS, SECRET_HEADERS } from './redact';

export interface LoggerOptions {
  name: string;
  level?: string;
  /** Where lines go; stdout by default (tests pass a stream to read them). */
  destination?: pino.DestinationStream;
}

/**
 * Set on a child logger that already binds `traceId`, `spanId` and `reqId` (a request's
 * `req.log`, which may log after the request's async context is gone): the mixin adds nothing
 * to its lines, so no field appears twice.
 */
export const TRACE_BOUND: unique symbol = Symbol('parametric.traceBound');

/**
 * Every line logged while a request or a job is handled carries its `traceId`, `spanId` and
 * `reqId` (from @parametric/tracing's AsyncLocalStorage), whichever logger wrote it.
 */
function traceMixin(_obj: object, _level: number, logger: Logger): object {
  return (logger as Logger & { [TRACE_BOUND]?: boolean })[TRACE_BOUND] ? {} : traceLogFields();
}

export function createLogger({ name, level = 'info', destination }: LoggerOptions): Logger {
  const logger = pino(
    {
      name,
      level,
      // Secrets out of every line (redact.ts); a child's bindings below.
      formatters: { log: redacted },
      base: { service: name },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: traceMixin,
    },
    // Each line written to stdout before the call returns: none lost when the process dies, and
    // one write system call, where pino's default handed each write to libuv's thread pool at
    // several times that CPU (docs/decisions.md, "Log lines are written as they are logged").
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
  // A child's bindings are written once, when it is made: they are hidden here, for the root and
  // every logger made from it (a child's `child` is found on its parent). The root's own bindings
  // are `base`, set above.
  const child = logger.child;
  logger.child = function redactedChild(this: Logger, bindings, options) {
    return child.call(this, redacted(bindings), options);
  } as Logger['child'];
  return logger;
}
