import { Registry } from 'prom-client';
import { parseExposition, relayLag, sampleValue } from '../../src';

type Event = { id: string; createdAt: string };
const T0 = Date.parse('2026-11-27T10:00:00.000Z');

/** A producer as the relay sees it: what it was asked to enqueue, and the marker it holds. */
function recordingProducer() {
  const added: Event[] = [];
  const swaps: Array<[string, string, number]> = [];
  return {
    added,
    swaps,
    async addBulk(jobs: readonly { payload: Event; opts: { jobId: string } }[]) {
      added.push(...jobs.map((j) => j.payload));
      return jobs.length;
    },
    async swapRelayMarker(key: string, value: string, ttlMs: number) {
      swaps.push([key, value, ttlMs]);
      return 'the marker before';
    },
  };
}

describe('relayLag: the events relay’s producer, timed', () => {
  // Without the marker the relay can never notice that Redis lost what it enqueued, and the
  // events it kept for that case would never be sent again (libs/events/src/relay.ts).
  it('keeps the producer’s relay marker, so the relay still notices Redis losing data', async () => {
    const producer = recordingProducer();
    const timed = relayLag(new Registry(), 'policies', producer, () => T0);
    expect(timed.swapRelayMarker).toBeDefined();
    await expect(timed.swapRelayMarker?.('policies:outbox:1', '2:123', 900_000)).resolves.toBe(
      'the marker before',
    );
    expect(producer.swaps).toEqual([['policies:outbox:1', '2:123', 900_000]]);
  });

  it('enqueues what it is given and observes each event’s lag from its createdAt', async () => {
    const registry = new Registry();
    const producer = recordingProducer();
    const timed = relayLag(registry, 'policies', producer, () => T0 + 2_500);
    const events = [
      { id: 'a', createdAt: new Date(T0).toISOString() },
      { id: 'b', createdAt: new Date(T0 + 2_000).toISOString() },
    ];
    await timed.addBulk(events.map((payload) => ({ payload, opts: { jobId: payload.id } })));
    expect(producer.added).toEqual(events);
    // As Prometheus reads it: the exposition `GET /metrics` serves.
    const samples = parseExposition(await registry.metrics());
    const policies = { collection: 'policies' };
    expect(sampleValue(samples, 'outbox_relay_lag_seconds_count', policies)).toBe(2);
    expect(sampleValue(samples, 'outbox_relay_lag_seconds_sum', policies)).toBeCloseTo(3.0);
  });

  it('has no marker to offer when the producer has none', () => {
    const { addBulk } = recordingProducer();
    expect(relayLag(new Registry(), 'policies', { addBulk }).swapRelayMarker).toBeUndefined();
  });
});
