export { allocateEvenly, applyBasisPoints, mulDiv, type Rounding, roundToUnit, sum } from './arithmetic';
export {
  CURRENCY_EXPONENTS,
  currencyOfMarket,
  exponentOf,
  type Iso4217Currency,
  MARKET_CURRENCY,
  MARKETS,
  type Market,
  TOKEN_DECIMALS,
  type Token,
} from './currencies';
export { formatMinor, MAX_EXPONENT, minorFromNumber, numberFromMinor, parseMinor } from './decimal';
export { MoneyError, type MoneyErrorCode } from './errors';
export { formatMoney } from './format';
export { decimalString } from './schema';
