import { createMetrics, parseExposition, sampleValue } from '@parametric/metrics';
import CircuitBreaker from 'opossum';

// The shared breaker helper the chain, Daraja and rate-source clients are observed with, on a
// real opossum breaker: each event moves the state gauge and counts one transition.

it('follows a breaker through open, half-open and closed', async () => {
  const metrics = createMetrics('payments');
  let fail = true;
  const breaker = new CircuitBreaker(
    async () => {
      if (fail) throw new Error('down');
      return 'ok';
    },
    { resetTimeout: 100, volumeThreshold: 2, errorThresholdPercentage: 50, timeout: false },
  );
  metrics.observeBreaker('mpesa', breaker);
  const read = async () => parseExposition(await metrics.registry.metrics());
  const transitions = async (to: string) =>
    sampleValue(await read(), 'circuit_breaker_transitions_total', { breaker: 'mpesa', to });
  const state = async () => sampleValue(await read(), 'circuit_breaker_state', { breaker: 'mpesa' });

  expect(await state()).toBe(0);
  expect((await read()).filter((s) => s.name === 'circuit_breaker_transitions_total')).toHaveLength(3);
  for (let i = 0; i < 2; i++) await breaker.fire().catch(() => undefined);
  expect(await state()).toBe(2);
  expect(await transitions('open')).toBe(1);
  await new Promise((resolve) => setTimeout(resolve, 150));
  expect(await state()).toBe(1);
  expect(await transitions('half_open')).toBe(1);
  fail = false;
  await breaker.fire();
  expect(await state()).toBe(0);
  expect(await transitions('closed')).toBe(1);
  breaker.shutdown();
});
