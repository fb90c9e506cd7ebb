import net from 'node:net';
import { createApp, finishApp, type Listening, listen, metricsRoutes } from '@parametric/http';
import { createLogger } from '@parametric/logger';
import { createMetrics, parseExposition, type Sample, sampleValue } from '@parametric/metrics';
import { eventually, testRedisUrl, uniqueRedisPrefix } from '@parametric/test-harness';
import { UnrecoverableError } from 'bullmq';
import { createProducer, createQueueStats, createWorker } from '../src';
import { closeAfterEach, deferred } from './helpers';

/**
 * The queue metrics as Prometheus scrapes them: gauges read from Redis at scrape time, and the
 * jobs processed counted where every worker is created.
 */

const logger = createLogger({ name: 'queue-metrics-test', level: 'silent' });
const track = closeAfterEach();

/** A service's `/metrics` on a real port, over the given queue stats. */
async function serveMetrics(stats: ReturnType<typeof createQueueStats>): Promise<Listening> {
  const metrics = createMetrics(`queue-test-${uniqueRedisPrefix('svc')}`);
  metrics.observeQueues(stats);
  const app = createApp(logger, { metrics: metrics.http });
  app.use(metricsRoutes(metrics.handler));
  finishApp(app, logger);
  return listen(app, 0, '127.0.0.1');
}

async function scrape(http: Listening): Promise<Sample[]> {
  const res = await fetch(`${http.url}/metrics`);
  expect(res.status).toBe(200);
  return parseExposition(await res.text());
}

it('the gauges count a job added to a queue, and the counter moves when a worker finishes it', async () => {
  const prefix = uniqueRedisPrefix('queue_metrics');
  const stats = track(createQueueStats(['policy-sweeps'], { connection: testRedisUrl(), prefix }));
  const http = track(await serveMetrics(stats));
  const producer = track(createProducer('policy-sweeps', { connection: testRedisUrl(), prefix }));
  const waiting = { queue: 'policy-sweeps', state: 'waiting' };
  const completed = { queue: 'policy-sweeps', outcome: 'completed' };
  const failed = { queue: 'policy-sweeps', outcome: 'failed' };

  const before = await scrape(http);
  expect(sampleValue(before, 'queue_jobs', waiting)).toBe(0);
  expect(sampleValue(before, 'queue_oldest_waiting_age_seconds', { queue: 'policy-sweeps' })).toBe(0);

  await producer.add({ task: 'expire-policies' });
  await producer.add({ task: 'release-capacity' }, { attempts: 1 });
  const queued = await scrape(http);
  expect(sampleValue(queued, 'queue_jobs', waiting)).toBe(2);
  expect(sampleValue(queued, 'queue_jobs', { queue: 'policy-sweeps', state: 'active' })).toBe(0);
  expect(
    queued.some((s) => s.name === 'queue_oldest_waiting_age_seconds' && s.labels.queue === 'policy-sweeps'),
  ).toBe(true);

  const handled = deferred<void>();
  let seen = 0;
  track(
    createWorker(
      'policy-sweeps',
      async (payload) => {
        if (++seen === 2) handled.resolve();
        if (payload.task === 'release-capacity') throw new UnrecoverableError('refused for the test');
      },
      { connection: testRedisUrl(), prefix },
    ),
  );
  await handled.promise;

  const after = await eventually(async () => {
    const samples = await scrape(http);
    expect(sampleValue(samples, 'queue_jobs', waiting)).toBe(0);
    expect(sampleValue(samples, 'queue_jobs_processed_total', completed)).toBe(
      sampleValue(before, 'queue_jobs_processed_total', completed) + 1,
    );
    expect(sampleValue(samples, 'queue_jobs_processed_total', failed)).toBe(
      sampleValue(before, 'queue_jobs_processed_total', failed) + 1,
    );
    return samples;
  });
  expect(sampleValue(after, 'queue_jobs', { queue: 'policy-sweeps', state: 'failed' })).toBe(1);
  expect(sampleValue(after, 'queue_oldest_waiting_age_seconds', { queue: 'policy-sweeps' })).toBe(0);
});

it('a Redis that never answers leaves the queue series out of the scrape instead of hanging it', async () => {
  // Accepts connections and never says a word.
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as net.AddressInfo;
  try {
    const stats = track(
      createQueueStats(['events'], {
        connection: `redis://127.0.0.1:${port}`,
        prefix: 'silent',
        timeoutMs: 300,
      }),
    );
    const http = track(await serveMetrics(stats));
    const samples = await scrape(http);
    expect(samples.some((s) => s.name === 'queue_jobs')).toBe(false);
    expect(samples.some((s) => s.name === 'process_cpu_seconds_total')).toBe(true);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});
