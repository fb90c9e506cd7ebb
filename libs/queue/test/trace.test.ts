import { randomUUID } from 'node:crypto';
import { createLogger } from '@parametric/logger';
import { captureLogs, testRedisUrl, uniqueRedisPrefix } from '@parametric/test-harness';
import { currentTrace, formatTraceparent, runInTrace, type TraceContext } from '@parametric/tracing';
import type { Job } from 'bullmq';
import { createProducer, createWorker } from '../src';
import { closeAfterEach, deferred, kybVerified } from './helpers';

const track = closeAfterEach();
const REQUEST: TraceContext = {
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId: '00f067aa0ba902b7',
  reqId: 'req-queue-1',
};

describe('a job continues the trace of the request that added it', () => {
  it("restores the trace for the handler's whole run: any logger's lines carry traceId and reqId", async () => {
    const prefix = uniqueRedisPrefix('trace');
    const logs = captureLogs();
    const logger = createLogger({ name: 'worker', destination: logs.destination });
    const producer = track(createProducer('payout-attempts', { connection: testRedisUrl(), prefix }));
    const handled = deferred<{ inside: TraceContext | undefined; job: Job }>();
    track(
      createWorker(
        'payout-attempts',
        async (_payload, job) => {
          await new Promise((resolve) => setImmediate(resolve));
          logger.info('attempting payout');
          handled.resolve({ inside: currentTrace(), job });
        },
        { connection: testRedisUrl(), prefix },
      ),
    );

    const payoutId = randomUUID();
    await runInTrace(REQUEST, () => producer.add({ payoutId, part: 1 }));
    const { inside, job } = await handled.promise;

    expect(inside).toMatchObject({ traceId: REQUEST.traceId, reqId: REQUEST.reqId });
    expect(inside?.spanId).not.toBe(REQUEST.spanId);
    expect(logs.records().find((r) => r.msg === 'attempting payout')).toMatchObject({
      traceId: REQUEST.traceId,
      spanId: inside?.spanId,
      reqId: REQUEST.reqId,
    });
    // The trace rides in the job's options; the payload is exactly what was added.
    expect(job.data).toEqual({ payoutId, part: 1 });
  });

  it("an event keeps the trace it was created in, not the relaying code's", async () => {
    const prefix = uniqueRedisPrefix('trace');
    const producer = track(createProducer('events', { connection: testRedisUrl(), prefix }));
    const handled = deferred<TraceContext | undefined>();
    track(
      createWorker('events', async () => handled.resolve(currentTrace()), {
        connection: testRedisUrl(),
        prefix,
      }),
    );

    const event = runInTrace(REQUEST, () => kybVerified());
    expect(event.trace).toEqual({
      traceparent: formatTraceparent(REQUEST.traceId, REQUEST.spanId),
      requestId: REQUEST.reqId,
    });
    // Relayed later from inside some other request's trace: the event's own trace wins.
    const other: TraceContext = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), reqId: 'other' };
    await runInTrace(other, () => producer.add(event, { jobId: event.id }));
    expect(await handled.promise).toMatchObject({ traceId: REQUEST.traceId, reqId: REQUEST.reqId });
  });

  it('a job added outside any trace starts its own', async () => {
    const prefix = uniqueRedisPrefix('trace');
    const producer = track(createProducer('payout-attempts', { connection: testRedisUrl(), prefix }));
    const handled = deferred<TraceContext | undefined>();
    track(
      createWorker('payout-attempts', async () => handled.resolve(currentTrace()), {
        connection: testRedisUrl(),
        prefix,
      }),
    );
    await producer.add({ payoutId: randomUUID(), part: 1 });
    const inside = await handled.promise;
    expect(inside?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(inside?.reqId).toBeUndefined();
  });
});
