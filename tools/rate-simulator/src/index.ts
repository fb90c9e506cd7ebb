export { RATE_SIMULATOR_BIN } from './bin-path';
export {
  DEFAULT_KES_PER_USDC,
  EXCHANGE_RATES_PATH,
  RATE_BEHAVIOURS,
  RATE_TIMESTAMP_HEADER,
  type RateBehaviour,
  type RateSimulator,
  type RateSimulatorOptions,
  startRateSimulator,
} from './simulator';
