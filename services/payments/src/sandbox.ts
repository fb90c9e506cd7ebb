import { AppError } from '@parametric/http';

export type Environment = 'live' | 'sandbox';

/**
 * The only numbers a sandbox organization's money may move to: the M-Pesa simulator's documented
 * test numbers (tools/mpesa-simulator/src/outcomes.ts, its README's table; docs/api.md,
 * "Sandbox"), each with a scripted outcome. Any other number could be a real person's phone, so
 * a sandbox prompt or payout to it is refused before anything is written or sent.
 * services/payments/test/unit/sandbox-numbers.test.ts keeps this list within the simulator's.
 */
export const SANDBOX_TEST_NUMBERS: readonly string[] = [
  // STK push (premiums): pays; cancelled; unreachable; wrong PIN; no callback; callback twice.
  '+254711000001',
  '+254711000032',
  '+254711000037',
  '+254711002001',
  '+254711000090',
  '+254711000091',
  // B2C (payouts): insufficient funds on odd attempts; unregistered; queue timeout; result twice.
  '+254722000011',
  '+254722000021',
  '+254722000090',
  '+254722000091',
];

const TEST_NUMBERS = new Set(SANDBOX_TEST_NUMBERS);

/** A sandbox organization's phone number must be a test number: 400 naming `field` otherwise. */
export function requireSandboxTestNumber(environment: Environment, phone: string, field: string): void {
  if (environment !== 'sandbox' || TEST_NUMBERS.has(phone)) return;
  throw AppError.invalid(
    'A sandbox organization’s mobile money goes only to the M-Pesa simulator’s test numbers (docs/api.md, "Sandbox"), never to a real phone',
    [{ field, message: `must be one of the sandbox test numbers: ${SANDBOX_TEST_NUMBERS.join(', ')}` }],
  );
}

/** The Daraja client of each environment; `sandbox` is absent where the platform has none. */
export interface ByEnvironment<P> {
  live: P;
  sandbox?: P;
}

/** The client an environment's money moves through, or undefined (a sandbox without one). */
export function providerOf<P>(providers: ByEnvironment<P>, environment: Environment | null | undefined) {
  return environment === 'sandbox' ? providers.sandbox : providers.live;
}
