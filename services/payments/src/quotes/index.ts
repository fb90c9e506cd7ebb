export {
  checkQuoteConfig,
  type QuoteConfig,
  quoteConfig,
  type RateSourceDeps,
  rateSourceFrom,
} from './config';
export { convertKesToUsdc, KES_EXPONENT, USDC_DECIMALS } from './conversion';
export {
  createQuote,
  type QuoteDeps,
  type QuoteInput,
  type QuoteTenant,
  type QuoteView,
  quotesOf,
  quoteView,
  readQuote,
} from './domain';
export {
  compareRates,
  createRateGuard,
  parseRateLimits,
  type RateGuard,
  type RateGuardOptions,
  type RateLimits,
  type RateReference,
  type RateReferenceStore,
  type RateRefusal,
  type RateRefusalCode,
  REFERENCE_WINDOW_MS,
  refusalOf,
} from './guard';
export { type QuoteDoc, type QuoteModel, quoteModel } from './model';
export {
  type BreakerState,
  createRateSource,
  type ExactRate,
  invertKesPerUsdc,
  parseKesPerUsdc,
  RATE_DECIMALS,
  RATE_TIMESTAMP_HEADER,
  type RateSource,
  RateSourceError,
  type RateSourceErrorCode,
  type RateSourceOptions,
  type UsdcPerKes,
} from './rates';
export {
  mongoRateReferences,
  RATE_REFERENCE_ID,
  type RateReferenceDoc,
  type RateReferenceModel,
  rateReferenceModel,
} from './reference';
export { type QuoteContext, quoteRoutes } from './routes';
