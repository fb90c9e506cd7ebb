/**
 * Why a money operation refused its input. Callers branch on `code` (e.g. a determination
 * records `CURRENCY_EXPONENT_UNREGISTERED` as its reason), never on the message.
 */
export type MoneyErrorCode =
  | 'INVALID_DECIMAL'
  | 'TOO_MANY_DECIMALS'
  | 'INVALID_EXPONENT'
  | 'NOT_FINITE'
  | 'UNSAFE_MAGNITUDE'
  | 'DIVISION_BY_ZERO'
  | 'INVALID_BASIS_POINTS'
  | 'INVALID_ROUNDING'
  | 'NOT_BIGINT'
  | 'INVALID_PARTS'
  | 'CURRENCY_EXPONENT_UNREGISTERED';

export class MoneyError extends Error {
  override name = 'MoneyError';

  constructor(
    readonly code: MoneyErrorCode,
    message: string,
  ) {
    super(message);
  }
}
