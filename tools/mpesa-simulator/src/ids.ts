import { randomBytes, randomInt } from 'node:crypto';
import { checkoutTimePart, darajaTimestamp } from './time';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/**
 * Identifiers in the shapes Daraja uses (from the samples in the Daraja documentation).
 * `sequence` keeps every generated id unique within one simulator even when the random
 * part repeats.
 */
export function createIds() {
  let sequence = 0;
  const next = () => ++sequence;
  return {
    /** Gateway request id, e.g. `1c5b-4ba8-815c-ac45c57a3db01469899`. */
    requestId: () => `${hex(2)}-${hex(2)}-${hex(2)}-${hex(6)}${next()}`,
    /** STK MerchantRequestID, e.g. `f1e2-4b95-a71d-b30d3cdbb7a7942864`. */
    merchantRequestId: () => `${hex(2)}-${hex(2)}-${hex(2)}-${hex(6)}${next()}`,
    /**
     * STK CheckoutRequestID, e.g. `ws_CO_21072024125243250722943992`: `ws_CO_`, the time
     * (DDMMYYYYHHmmssSSS, EAT), the number without `254`, then our sequence.
     */
    checkoutRequestId: (now: Date, msisdn: string) =>
      `ws_CO_${checkoutTimePart(now)}${msisdn.slice(3)}${next()}`,
    /** ConversationID, e.g. `AG_20240706_20106e9209f64bebd05b`. */
    conversationId: (now: Date) =>
      `AG_${darajaTimestamp(now).slice(0, 8)}_${hex(8)}${next().toString(16).padStart(4, '0')}`,
    /** An OriginatorConversationID Daraja generates itself (Transaction Status), e.g. `53e3-4aa8-9fe0-8fb5e4092cdd3533373`. */
    originatorConversationId: () => `${hex(2)}-${hex(2)}-${hex(2)}-${hex(6)}${next()}`,
    /** OAuth access token, e.g. `c9SQxWWhmdVRlyh0zh8gZDTkubVF` (28 letters and digits). */
    accessToken: () => {
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
      let token = '';
      for (let i = 0; i < 28; i++) token += alphabet[randomInt(alphabet.length)];
      return token;
    },
  };
}

export type Ids = ReturnType<typeof createIds>;

/**
 * M-Pesa receipt / transaction ids: 10 upper-case letters and digits starting with a letter,
 * e.g. `SG632NMUAB`. Unique within one simulator.
 */
export function createReceipts() {
  const issued = new Set<string>();
  const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const alphabet = `${letters}0123456789`;
  return () => {
    for (;;) {
      let receipt = letters[randomInt(letters.length)] as string;
      for (let i = 0; i < 9; i++) receipt += alphabet[randomInt(alphabet.length)];
      if (!issued.has(receipt)) {
        issued.add(receipt);
        return receipt;
      }
    }
  };
}
