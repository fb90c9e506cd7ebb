/**
 * Scripted outcomes, chosen by the customer's number (in Daraja's format, 2547XXXXXXXX).
 * Result codes and descriptions are Daraja's (M-Pesa Express and B2C result-code tables).
 */

export const RESULT_DESC = {
  success: 'The service request is processed successfully.',
  stkInsufficient: 'The balance is insufficient for the transaction.',
  cancelled: 'Request cancelled by user',
  unreachable: 'DS timeout user cannot be reached',
  wrongPin: 'The initiator information is invalid.',
  b2cInsufficient: 'The balance is insufficient for the transaction.',
  belowMinimum: 'Declined due to limit rule: less than the minimum transaction amount.',
  aboveMaximum: 'Declined due to limit rule: greater than the maximum transaction amount.',
  initiatorInvalid: 'The initiator information is invalid.',
  notPermitted: 'The request is not permitted according to product assignment.',
  unregistered:
    "Credit Party customer type (Unregistered or Registered Customer) can't be supported by the service.",
} as const;

export interface StkScript {
  resultCode: number;
  resultDesc: string;
  /** How many times the callback is POSTed (0: never, 2: a duplicate). */
  callbacks: 0 | 1 | 2;
}

/** STK push outcomes by PhoneNumber; any other number succeeds. */
export const STK_SCRIPTS: Readonly<Record<string, StkScript>> = {
  '254711000001': { resultCode: 0, resultDesc: RESULT_DESC.success, callbacks: 1 },
  '254711000032': { resultCode: 1032, resultDesc: RESULT_DESC.cancelled, callbacks: 1 },
  '254711000037': { resultCode: 1037, resultDesc: RESULT_DESC.unreachable, callbacks: 1 },
  '254711002001': { resultCode: 2001, resultDesc: RESULT_DESC.wrongPin, callbacks: 1 },
  '254711000090': { resultCode: 0, resultDesc: RESULT_DESC.success, callbacks: 0 },
  '254711000091': { resultCode: 0, resultDesc: RESULT_DESC.success, callbacks: 2 },
};

export function stkScript(phone: string): StkScript {
  return STK_SCRIPTS[phone] ?? { resultCode: 0, resultDesc: RESULT_DESC.success, callbacks: 1 };
}

/** The number whose odd-numbered B2C attempts fail with ResultCode 1 (retriable). */
export const B2C_INSUFFICIENT_THEN_OK = '254722000011';

export interface B2cScript {
  resultCode: number;
  resultDesc: string;
  /** `result`: the Result to ResultURL; `queue-timeout`: only a QueueTimeOut to QueueTimeOutURL. */
  delivery: 'result' | 'queue-timeout';
  /** How many times the Result is POSTed. */
  times: 1 | 2;
}

/**
 * B2C outcome by PartyB. `attempt` counts the B2C requests accepted for this number
 * (1 for the first). Any unlisted number succeeds.
 */
export function b2cScript(phone: string, attempt: number): B2cScript {
  const ok: B2cScript = { resultCode: 0, resultDesc: RESULT_DESC.success, delivery: 'result', times: 1 };
  switch (phone) {
    case B2C_INSUFFICIENT_THEN_OK:
      return attempt % 2 === 1 ? { ...ok, resultCode: 1, resultDesc: RESULT_DESC.b2cInsufficient } : ok;
    case '254722000021':
      return { ...ok, resultCode: 2040, resultDesc: RESULT_DESC.unregistered };
    case '254722000090':
      return { ...ok, delivery: 'queue-timeout' };
    case '254722000091':
      return { ...ok, times: 2 };
    default:
      return ok;
  }
}

/** Display names in ReceiverPartyPublicName / DebitPartyName (`2547... - NAME`). */
export function customerName(phone: string): string {
  return `${phone} - SIMULATED CUSTOMER ${phone.slice(-4)}`;
}
