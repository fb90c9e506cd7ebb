import { eventually } from '../src';

const activeTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('eventually', () => {
  it('retries until fn stops throwing and resolves with what it returned', async () => {
    let calls = 0;
    const value = await eventually(() => {
      calls++;
      if (calls < 3) throw new Error(`not yet (${calls})`);
      return { calls };
    });
    expect(value).toEqual({ calls: 3 });
    expect(calls).toBe(3);
  });

  it('retries rejected promises the same way as throws', async () => {
    let calls = 0;
    await expect(
      eventually(async () => {
        calls++;
        if (calls < 2) throw new Error('not yet');
        return 'ready';
      }),
    ).resolves.toBe('ready');
  });

  it('resolves with fn value at once when the first attempt passes', async () => {
    const started = Date.now();
    await expect(eventually(() => 42, { interval: 1_000 })).resolves.toBe(42);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('rejects after the timeout with the message and the LAST error seen, and then stops calling fn', async () => {
    let calls = 0;
    const started = Date.now();
    const failure = await eventually(
      () => {
        calls++;
        throw new Error(`status was PENDING on attempt ${calls}`);
      },
      { timeout: 300, interval: 20, message: 'delivery row DELIVERED' },
    ).catch((err: Error) => err);
    const elapsed = Date.now() - started;
    expect(failure).toBeInstanceOf(Error);
    const { message, cause } = failure as Error;
    expect(message).toMatch(
      new RegExp(
        `^delivery row DELIVERED: not satisfied within 300 ms \\(${calls} attempts\\); last error: status was PENDING on attempt ${calls}$`,
      ),
    );
    expect((cause as Error).message).toBe(`status was PENDING on attempt ${calls}`);
    expect(calls).toBeGreaterThan(3);
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(elapsed).toBeLessThan(1_000);
    // Bounded: no attempt after it gave up.
    const callsAtFailure = calls;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(calls).toBe(callsAtFailure);
  });

  it('carries a failing jest expectation into its message (what was last seen)', async () => {
    const row = { status: 'PENDING' };
    await expect(eventually(() => expect(row.status).toBe('DELIVERED'), { timeout: 100 })).rejects.toThrow(
      /last error: [\s\S]*Expected: [\s\S]*"DELIVERED"[\s\S]*Received: [\s\S]*"PENDING"/,
    );
  });

  it('shows a thrown non-Error value as JSON', async () => {
    await expect(
      eventually(
        () => {
          throw { status: 'FAILED', attempts: 2 };
        },
        { timeout: 60, interval: 10 },
      ),
    ).rejects.toThrow('last error: {"status":"FAILED","attempts":2}');
  });

  it('abandons an attempt that never settles at the deadline and leaves no timer behind', async () => {
    const before = activeTimers();
    const started = Date.now();
    await expect(eventually(() => new Promise<never>(() => {}), { timeout: 200 })).rejects.toThrow(
      'not satisfied within 200 ms (1 attempts); attempt 1 still running at the deadline; no attempt finished',
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(activeTimers()).toBe(before);
  });

  it('names the last failure when a later attempt is the one cut off', async () => {
    let calls = 0;
    await expect(
      eventually(
        () => {
          calls++;
          if (calls === 1) throw new Error('first attempt failed');
          return new Promise<never>(() => {});
        },
        { timeout: 200, interval: 10 },
      ),
    ).rejects.toThrow('attempt 2 still running at the deadline; last error: first attempt failed');
  });

  it('points a timeout at the calling line, not at the helper', async () => {
    const failure = (await eventually(
      () => {
        throw new Error('never');
      },
      { timeout: 10 },
    ).catch((err: Error) => err)) as Error;
    const firstFrame = failure.stack?.split('\n')[1] ?? '';
    expect(firstFrame).toContain('eventually.test.ts');
    expect(failure.stack?.split('\n')[0]).toBe(`Error: ${failure.message}`);
  });
});
