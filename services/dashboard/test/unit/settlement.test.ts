import { amountProblem } from '../../src/settlement';

/**
 * The settlement form's amount rules (services/dashboard/src/settlement.ts) against the server's
 * (services/determinations/src/reports/domain.ts): the same verdicts, in the same words.
 */

const OWED = 2_000_000n;

it.each([
  ['SETTLED_FULL', OWED],
  ['SETTLED_PARTIAL', 1n],
  ['SETTLED_PARTIAL', OWED - 1n],
  ['NOT_SETTLED', 0n],
] as const)('accepts %s of %s minor units', (outcome, settled) => {
  expect(amountProblem(outcome, settled, OWED, 'KES')).toBeNull();
});

it.each([
  ['SETTLED_FULL', OWED + 1n, 'must not exceed the amount owed (2000000 minor units of KES)'],
  ['SETTLED_FULL', OWED - 1n, 'must equal the amount owed (2000000) when the outcome is SETTLED_FULL'],
  [
    'SETTLED_PARTIAL',
    OWED,
    'must be more than 0 and less than the amount owed when the outcome is SETTLED_PARTIAL',
  ],
  [
    'SETTLED_PARTIAL',
    0n,
    'must be more than 0 and less than the amount owed when the outcome is SETTLED_PARTIAL',
  ],
  ['NOT_SETTLED', 1n, 'must be "0" when the outcome is NOT_SETTLED'],
] as const)('refuses %s of %s minor units: %s', (outcome, settled, message) => {
  expect(amountProblem(outcome, settled, OWED, 'KES')).toBe(message);
});
