import { createLogger } from '@parametric/logger';
import { captureLogs } from '@parametric/test-harness';
import { paymentsConfigSchema } from '../../../src/config';
import {
  createRateGuard,
  parseRateLimits,
  type RateLimits,
  type RateReference,
  REFERENCE_WINDOW_MS,
  refusalOf,
} from '../../../src/quotes/guard';
import { RateSourceError } from '../../../src/quotes/rates';
import { memoryRateReferences, T0 } from '../../quotes/support';
import { paymentsEnv } from '../config-env';

// The rules a well-formed rate must also pass (docs/payments.md, "Quotes"), on their own: bounds
// inclusive, step inclusive in both directions, only against a reference younger than an hour.

const limits: RateLimits = { min: '50', max: '500', maxStepPercent: '10' };
const at = (ms: number) => new Date(T0.getTime() + ms);
const reference = (kesPerUsdc: string, ageMs = 60_000): RateReference => ({
  kesPerUsdc,
  acceptedAt: at(-ageMs),
});
const codeOf = (rate: string, ref: RateReference | null = null, l: RateLimits = limits) =>
  refusalOf(rate, T0, l, ref)?.code ?? 'ACCEPTED';

describe('bounds (RATE_KES_PER_USDC_MIN / _MAX, both accepted themselves)', () => {
  it.each([
    ['0.000001', 'OUT_OF_BOUNDS'], // 1,000 KES would be quoted as 1,000,000,000 USDC
    ['49.999999999999999999', 'OUT_OF_BOUNDS'],
    ['50', 'ACCEPTED'],
    ['50.000000000000000001', 'ACCEPTED'],
    ['129.45', 'ACCEPTED'],
    ['500.00', 'ACCEPTED'],
    ['500.000000000000000001', 'OUT_OF_BOUNDS'],
    ['129450', 'OUT_OF_BOUNDS'],
  ])('the first rate ever, %s KES per USDC: %s', (rate, code) => {
    expect(codeOf(rate)).toBe(code);
  });

  it('apply whatever the reference: a rate within the step of a reference out of bounds is still refused', () => {
    expect(codeOf('49.9', reference('50'))).toBe('OUT_OF_BOUNDS');
    expect(codeOf('500.1', reference('500'))).toBe('OUT_OF_BOUNDS');
  });

  it('say what the rate was held to', () => {
    expect(refusalOf('0.000001', T0, limits, null)).toEqual({
      code: 'OUT_OF_BOUNDS',
      kesPerUsdc: '0.000001',
      min: '50',
      max: '500',
    });
  });

  it('are compared exactly, decimals of any length against each other', () => {
    const fine = { min: '129.449999999999999999', max: '129.45', maxStepPercent: '10' };
    expect(codeOf('129.45', null, fine)).toBe('ACCEPTED');
    expect(codeOf('129.449999999999999998', null, fine)).toBe('OUT_OF_BOUNDS');
  });
});

describe('step (RATE_MAX_STEP_PERCENT from the last accepted rate, within the hour)', () => {
  it.each([
    ['110', 'ACCEPTED'], // +10 % exactly
    ['110.000000000000000001', 'STEP_TOO_LARGE'],
    ['90', 'ACCEPTED'], // −10 % exactly
    ['89.999999999999999999', 'STEP_TOO_LARGE'],
    ['100', 'ACCEPTED'],
    ['130', 'STEP_TOO_LARGE'],
    ['70', 'STEP_TOO_LARGE'],
  ])('from 100: %s is %s', (rate, code) => {
    expect(codeOf(rate, reference('100'))).toBe(code);
  });

  it('is a percentage of the reference, exactly, for references with decimals', () => {
    // 10 % of 129.45 is 12.945.
    expect(codeOf('142.395', reference('129.45'))).toBe('ACCEPTED');
    expect(codeOf('142.395000001', reference('129.45'))).toBe('STEP_TOO_LARGE');
    expect(codeOf('116.505', reference('129.45'))).toBe('ACCEPTED');
    expect(codeOf('116.504999999', reference('129.45'))).toBe('STEP_TOO_LARGE');
    // A fractional step.
    const half = { ...limits, maxStepPercent: '0.5' };
    expect(codeOf('100.5', reference('100'), half)).toBe('ACCEPTED');
    expect(codeOf('100.51', reference('100'), half)).toBe('STEP_TOO_LARGE');
  });

  it('applies while the reference is younger than an hour, and not from the hour on', () => {
    expect(codeOf('130', reference('100', REFERENCE_WINDOW_MS - 1))).toBe('STEP_TOO_LARGE');
    expect(codeOf('130', reference('100', REFERENCE_WINDOW_MS))).toBe('ACCEPTED');
    expect(codeOf('70', reference('100', 3 * REFERENCE_WINDOW_MS))).toBe('ACCEPTED');
    // The bounds still apply with an old reference.
    expect(codeOf('0.000001', reference('100', 3 * REFERENCE_WINDOW_MS))).toBe('OUT_OF_BOUNDS');
  });

  it('applies to a reference stamped after the fetch (another replica’s clock ahead)', () => {
    expect(codeOf('130', { kesPerUsdc: '100', acceptedAt: at(5_000) })).toBe('STEP_TOO_LARGE');
  });

  it('says what the rate was compared with', () => {
    expect(refusalOf('130', T0, limits, reference('100'))).toEqual({
      code: 'STEP_TOO_LARGE',
      kesPerUsdc: '130',
      reference: '100',
      referenceAcceptedAt: at(-60_000),
      maxStepPercent: '10',
    });
  });
});

describe('limits', () => {
  it.each([
    [{ min: '500', max: '500', maxStepPercent: '10' }, 'must be below the maximum rate'],
    [{ min: '500.01', max: '500', maxStepPercent: '10' }, 'must be below the maximum rate'],
    [{ min: '0', max: '500', maxStepPercent: '10' }, 'the minimum rate must be a positive decimal'],
    [{ min: '50', max: '500', maxStepPercent: '0' }, 'the maximum step must be a positive decimal'],
    [{ min: '50', max: '5e2', maxStepPercent: '10' }, 'the maximum rate must be a positive decimal'],
  ])('refuses %j at start', (bad, message) => {
    expect(() => parseRateLimits(bad)).toThrow(message);
    expect(() => createRateGuard({ limits: bad, store: memoryRateReferences() })).toThrow(message);
  });
});

describe('the guard: reference, refusal, record', () => {
  function guarded(initial: RateReference | null = null) {
    const logs = captureLogs();
    const logger = createLogger({ name: 'guard-test', level: 'info', destination: logs.destination });
    const store = memoryRateReferences(initial);
    const refused: string[] = [];
    const guard = createRateGuard({ limits, store, logger, onRefused: (code) => refused.push(code) });
    return { guard, store, logs, refused };
  }
  const fetched = (kesPerUsdc: string, ms = 0) => ({ kesPerUsdc, fetchedAt: at(ms), source: 'coinbase' });

  function refusal(call: () => void): RateSourceError {
    try {
      call();
    } catch (err) {
      if (err instanceof RateSourceError) return err;
      throw err;
    }
    throw new Error('expected a refusal');
  }

  it('refuses with a RateSourceError, logs the rate and the bounds at error, and counts it once', async () => {
    const { guard, logs, refused, store } = guarded();
    const err = refusal(() => guard.check(fetched('0.000001'), null));
    expect(err.code).toBe('OUT_OF_BOUNDS');
    expect(err.message).toBe('the rate source gave a KES rate outside the range we accept');
    expect(refused).toEqual(['OUT_OF_BOUNDS']);
    expect(logs.records()).toEqual([
      expect.objectContaining({
        level: 50,
        code: 'OUT_OF_BOUNDS',
        kesPerUsdc: '0.000001',
        min: '50',
        max: '500',
        msg: expect.stringContaining('rate refused'),
      }),
    ]);
    // A refused rate never becomes the reference.
    expect(store.current()).toBeNull();
  });

  it('refuses a step with the reference and the step in the log, not in the partner’s message', async () => {
    const { guard, logs, refused } = guarded();
    const last = await guard.reference();
    expect(last).toBeNull();
    guard.check(fetched('100'), last);
    await guard.accepted(fetched('100'));
    const err = refusal(() => guard.check(fetched('89', 30_000), { kesPerUsdc: '100', acceptedAt: T0 }));
    expect(err.code).toBe('STEP_TOO_LARGE');
    expect(err.message).not.toMatch(/100|10 ?%/);
    expect(refused).toEqual(['STEP_TOO_LARGE']);
    expect(logs.records()).toEqual([
      expect.objectContaining({
        level: 50,
        code: 'STEP_TOO_LARGE',
        kesPerUsdc: '89',
        reference: '100',
        referenceAcceptedAt: T0.toISOString(),
        maxStepPercent: '10',
      }),
    ]);
  });

  it('records each accepted rate as the reference, a later acceptance replacing an earlier one only', async () => {
    const { guard, store } = guarded();
    await guard.accepted(fetched('129.45', 60_000));
    expect(await guard.reference()).toEqual({ kesPerUsdc: '129.45', acceptedAt: at(60_000) });
    await guard.accepted(fetched('131', 30_000)); // fetched earlier, recorded late
    expect(store.current()).toEqual({ kesPerUsdc: '129.45', acceptedAt: at(60_000) });
    await guard.accepted(fetched('131', 90_000));
    expect(store.current()).toEqual({ kesPerUsdc: '131', acceptedAt: at(90_000) });
  });
});

describe('config (RATE_KES_PER_USDC_MIN, RATE_KES_PER_USDC_MAX, RATE_MAX_STEP_PERCENT)', () => {
  // A whole payments environment without the three variables.
  const base = paymentsEnv;
  const issues = (env: Record<string, string>) => {
    const result = paymentsConfigSchema.safeParse({ ...base(), ...env });
    return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('defaults to 50 and 500 KES per USDC and a 10 % step, kept as exact text', () => {
    const config = paymentsConfigSchema.parse(base());
    expect(config).toMatchObject({
      RATE_KES_PER_USDC_MIN: '50',
      RATE_KES_PER_USDC_MAX: '500',
      RATE_MAX_STEP_PERCENT: '10',
    });
    expect(paymentsConfigSchema.parse({ ...base(), RATE_KES_PER_USDC_MIN: '' }).RATE_KES_PER_USDC_MIN).toBe(
      '50',
    );
    expect(
      paymentsConfigSchema.parse({ ...base(), RATE_KES_PER_USDC_MIN: '100.5', RATE_MAX_STEP_PERCENT: '2.5' }),
    ).toMatchObject({ RATE_KES_PER_USDC_MIN: '100.5', RATE_MAX_STEP_PERCENT: '2.5' });
  });

  it.each([
    [
      { RATE_KES_PER_USDC_MIN: '500' },
      'RATE_KES_PER_USDC_MIN: must be less than RATE_KES_PER_USDC_MAX (500)',
    ],
    [
      { RATE_KES_PER_USDC_MIN: '200', RATE_KES_PER_USDC_MAX: '150' },
      'RATE_KES_PER_USDC_MIN: must be less than RATE_KES_PER_USDC_MAX (150)',
    ],
    [{ RATE_MAX_STEP_PERCENT: '0' }, 'RATE_MAX_STEP_PERCENT: must be greater than 0'],
    [{ RATE_MAX_STEP_PERCENT: '0.000' }, 'RATE_MAX_STEP_PERCENT: must be greater than 0'],
    [{ RATE_MAX_STEP_PERCENT: '-5' }, 'RATE_MAX_STEP_PERCENT: must be a decimal such as 129.45'],
    [{ RATE_KES_PER_USDC_MAX: '5e2' }, 'RATE_KES_PER_USDC_MAX: must be a decimal such as 129.45'],
    [{ RATE_KES_PER_USDC_MIN: 'fifty' }, 'RATE_KES_PER_USDC_MIN: must be a decimal such as 129.45'],
  ])('refuses %j', (env, message) => {
    expect(issues(env)).toEqual([expect.stringContaining(message)]);
  });
});
