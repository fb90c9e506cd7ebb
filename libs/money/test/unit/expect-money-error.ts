import { MoneyError, type MoneyErrorCode } from '@parametric/money';

/** The MoneyError `run` throws; fails the test if it returns or throws anything else. */
export function moneyErrorOf(run: () => unknown): MoneyError {
  try {
    run();
  } catch (error) {
    if (error instanceof MoneyError) return error;
    throw error;
  }
  throw new Error('expected a MoneyError, but nothing was thrown');
}

export function expectMoneyError(run: () => unknown, code: MoneyErrorCode): void {
  expect(moneyErrorOf(run).code).toBe(code);
}
