import { createDeliveryGate, type Grant } from '../../src/delivery/gate';

/** The gate on a hand-driven clock: nothing here waits for time to pass. */
function gate(total: number, perOrganization: number) {
  let clock = 1_000_000;
  const g = createDeliveryGate({ total, perOrganization, slowMs: 500, timeoutMs: 10_000, now: () => clock });
  return { g, advance: (ms: number) => (clock += ms) };
}

const go = (grant: Grant) => {
  if (grant.kind !== 'go') throw new Error(`expected a slot, got ${JSON.stringify(grant)}`);
  return grant.release;
};

describe('delivery gate', () => {
  it('holds an organization to its own limit while others still get slots', async () => {
    const { g } = gate(10, 2);
    const a1 = g.tryAcquire('a');
    const a2 = g.tryAcquire('a');
    expect([a1, a2].every(Boolean)).toBe(true);
    expect(g.tryAcquire('a')).toBeNull();
    expect(g.tryAcquire('b')).not.toBeNull();
    expect(g.inFlight('a')).toBe(2);
    g.close();
  });

  it('hands a freed slot to the first waiter of the organization, in order', async () => {
    const { g } = gate(10, 1);
    const first = g.tryAcquire('a') as () => void;
    const order: number[] = [];
    const waiting = [1, 2].map((n) =>
      g.acquire('a').then((grant) => {
        order.push(n);
        return go(grant);
      }),
    );
    first();
    const second = await waiting[0];
    expect(order).toEqual([1]);
    second?.();
    (await waiting[1])?.();
    expect(order).toEqual([1, 2]);
    expect(g.inFlight('a')).toBe(0);
    g.close();
  });

  it('shares the process limit round-robin between organizations waiting', async () => {
    const { g } = gate(1, 5);
    const held = g.tryAcquire('x') as () => void;
    const served: string[] = [];
    const all = ['a', 'a', 'a', 'b', 'b'].map((org) =>
      g.acquire(org).then((grant) => {
        served.push(org);
        go(grant)();
      }),
    );
    held();
    await Promise.all(all);
    // a, then b, then a again: the busy organization does not go twice in a row ahead of b.
    expect(served).toEqual(['a', 'b', 'a', 'b', 'a']);
    g.close();
  });

  it('sends callers of a partner whose slots are all stuck to the delayed queue, for at most the timeout', async () => {
    const { g, advance } = gate(10, 2);
    g.tryAcquire('dead');
    g.tryAcquire('dead');
    // Stuck for longer than slowMs with nothing finished: the next caller steps aside.
    advance(600);
    const grant = await g.acquire('dead');
    expect(grant.kind).toBe('offload');
    if (grant.kind === 'offload') {
      expect(grant.delayMs).toBeGreaterThanOrEqual(500);
      expect(grant.delayMs).toBeLessThanOrEqual(10_000 + 500);
    }
    // Another partner is not affected.
    expect(g.tryAcquire('healthy')).not.toBeNull();
    g.close();
  });

  it('parks requests left without an answer: their partner keeps its slots, the others get the process slots back', async () => {
    const { g, advance } = gate(2, 2);
    g.tryAcquire('dead');
    g.tryAcquire('dead');
    expect(g.tryAcquire('healthy')).toBeNull();
    advance(600);
    const healthy = g.tryAcquire('healthy');
    expect(healthy).not.toBeNull();
    expect(g.inFlight('dead')).toBe(2);
    healthy?.();
    // At most `total` requests are parked: a second dead partner keeps its process slots.
    g.tryAcquire('dead-too');
    g.tryAcquire('dead-too');
    advance(600);
    expect(g.tryAcquire('healthy')).toBeNull();
    g.close();
  });

  it('keeps a busy but healthy partner in line in memory (it finishes requests)', async () => {
    const { g, advance } = gate(10, 1);
    const release = g.tryAcquire('busy') as () => void;
    advance(100);
    const waiting = g.acquire('busy');
    release();
    expect((await waiting).kind).toBe('go');
    g.close();
  });
});
