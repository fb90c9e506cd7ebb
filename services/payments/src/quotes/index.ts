export { type QuoteConfig, quoteConfig, rateSourceFrom } from './config';
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
export { type QuoteContext, quoteRoutes } from './routes';
