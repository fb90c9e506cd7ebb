export { MPESA_SIMULATOR_BIN } from './bin-path';
export { B2C_INSUFFICIENT_THEN_OK, type B2cScript, b2cScript, STK_SCRIPTS, type StkScript } from './outcomes';
export {
  type B2cTransaction,
  type CallbackKind,
  type Fault,
  type MpesaSimulator,
  type MpesaSimulatorOptions,
  type RecordedRequest,
  type SentCallback,
  type SimulatedTransaction,
  type StatusQueryTransaction,
  type StkTransaction,
  startMpesaSimulator,
  type TransactionState,
} from './simulator';
export { type CallbackPredicate, type CallbackSink, type ReceivedCallback, startCallbackSink } from './sink';
export { darajaTimestamp, parseDarajaTimestamp, type TimestampZone } from './time';

/** Daraja's STK Password: base64(BusinessShortCode + Passkey + Timestamp). */
export function stkPassword(shortcode: string, passkey: string, timestamp: string): string {
  return Buffer.from(`${shortcode}${passkey}${timestamp}`, 'utf8').toString('base64');
}
