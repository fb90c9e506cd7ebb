import { t } from './strings';

export const OUTCOMES = ['SETTLED_FULL', 'SETTLED_PARTIAL', 'NOT_SETTLED'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/**
 * The server's rules on the amount of a report (services/determinations/src/reports/domain.ts),
 * checked before sending so the form says so at once, in the server's words; the server checks
 * them again and its answer is shown as it is.
 */
export function amountProblem(
  outcome: Outcome,
  settled: bigint,
  owed: bigint,
  currency: string,
): string | null {
  if (settled > owed) return t('ruleNotAboveOwed', { owed: String(owed), currency });
  if (outcome === 'NOT_SETTLED' && settled !== 0n) return t('ruleNotSettledZero');
  if (outcome === 'SETTLED_PARTIAL' && (settled === 0n || settled >= owed)) return t('rulePartial');
  if (outcome === 'SETTLED_FULL' && settled !== owed) return t('ruleFull', { owed: String(owed) });
  return null;
}
