import {
  currentCarrier,
  currentTrace,
  formatTraceparent,
  parseTraceparent,
  runContinuing,
  runInTrace,
  traceLogFields,
} from '@parametric/tracing';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent', () => {
  it('reads a version-00 traceparent, whatever its flags', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, parentId: SPAN });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)).toEqual({ traceId: TRACE, parentId: SPAN });
  });

  it.each([
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['an all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['another version', `01-${TRACE}-${SPAN}-01`],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['trailing data', `00-${TRACE}-${SPAN}-01-extra`],
    ['an array (a repeated header)', [`00-${TRACE}-${SPAN}-01`]],
    ['nothing', undefined],
  ])('ignores %s (a new trace starts instead)', (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it('writes what it reads', () => {
    expect(parseTraceparent(formatTraceparent(TRACE, SPAN))).toEqual({ traceId: TRACE, parentId: SPAN });
  });
});

describe('the current trace', () => {
  it('is nothing outside a request or job', () => {
    expect(currentTrace()).toBeUndefined();
    expect(currentCarrier()).toBeUndefined();
    expect(traceLogFields()).toEqual({});
  });

  it('follows the async work started inside it', async () => {
    const context = { traceId: TRACE, spanId: SPAN, reqId: 'req-1' };
    const seen = await runInTrace(context, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return traceLogFields();
    });
    expect(seen).toEqual({ traceId: TRACE, spanId: SPAN, reqId: 'req-1' });
  });

  it('continues a carried trace with a span of its own (a job)', async () => {
    const carrier = { traceparent: formatTraceparent(TRACE, SPAN), requestId: 'req-2' };
    const inside = await runContinuing(carrier, 'job', 'consumer', async () => currentTrace());
    expect(inside?.traceId).toBe(TRACE);
    expect(inside?.reqId).toBe('req-2');
    expect(inside?.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(inside?.spanId).not.toBe(SPAN);
  });

  it('starts a trace of its own when the carried one is malformed or absent', async () => {
    const bad = await runContinuing({ traceparent: 'garbage' }, 'job', 'consumer', async () =>
      currentTrace(),
    );
    const none = await runContinuing(undefined, 'job', 'consumer', async () => currentTrace());
    expect(bad?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(none?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(bad?.traceId).not.toBe(none?.traceId);
  });
});
