export {
  type B2cQueueTimeout,
  type B2cResult,
  b2cQueueTimeoutSchema,
  b2cResultSchema,
  DarajaCallbackError,
  parseB2cQueueTimeout,
  parseB2cResult,
  parseStkCallback,
  parseTransactionStatusResult,
  type StkCallback,
  stkCallbackSchema,
  type TransactionStatusResult,
  transactionStatusResultSchema,
} from './callbacks';
export {
  type Accepted,
  type B2cCommand,
  type B2cInput,
  BREAKER_ERROR_THRESHOLD_PERCENTAGE,
  BREAKER_VOLUME_THRESHOLD,
  type BreakerState,
  createDaraja,
  type Daraja,
  type DarajaConfig,
  type StkPushInput,
  type StkQueryResult,
  TOKEN_REFRESH_MARGIN_SECONDS,
  type TransactionStatusInput,
} from './daraja';
export { DarajaError, type DarajaErrorDetail, type DarajaErrorKind } from './errors';
export { darajaTimestamp, fromDarajaPhone, type TimestampZone, toDarajaPhone } from './format';
export {
  isRetriableB2c,
  parseResultCode,
  type ResultFlow,
  type StableReason,
  stableReason,
} from './result-codes';
