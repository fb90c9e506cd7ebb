/**
 * Daraja ResultCodes (the asynchronous outcome of an STK push or a B2C payment), from the
 * result-code tables of the Daraja documentation (M-Pesa Express and B2C pages). Most are
 * numbers, but some are not (`SFC_IC0003`), and Daraja sends them as numbers or strings.
 */

/** `resultCode`: the numeric code, or -1 when Daraja's is not numeric; `rawResultCode`: as sent. */
export function parseResultCode(value: string | number): { resultCode: number; rawResultCode: string } {
  const raw = String(value).trim();
  return { resultCode: /^-?\d+$/.test(raw) ? Number(raw) : -1, rawResultCode: raw };
}

/** Why a payment or payout failed, in terms stable enough to show partners. */
export type StableReason =
  /** STK: the customer dismissed the prompt (1032). */
  | 'CANCELLED_BY_USER'
  /** STK: the prompt could not reach the phone (1037). */
  | 'PHONE_UNREACHABLE'
  /** STK: the customer entered a wrong PIN (2001). */
  | 'WRONG_PIN'
  /** STK: the customer's balance; B2C: our disbursement account's balance (1). */
  | 'INSUFFICIENT_BALANCE'
  /** STK: the customer did not answer in time; the request expired (1019). */
  | 'TIMEOUT'
  /** STK: same amount to the same customer within two minutes (17). */
  | 'DUPLICATE_WITHIN_2_MIN'
  /** Below the minimum, above the maximum, or past a daily or balance limit (2, 3, 4, 8). */
  | 'AMOUNT_LIMIT_EXCEEDED'
  /** STK: the customer's M-Pesa account is locked (8006). */
  | 'ACCOUNT_LOCKED'
  /** B2C: the recipient is not a registered M-Pesa customer (2040). */
  | 'RECIPIENT_NOT_REGISTERED'
  /** B2C: no such M-Pesa number (SFC_IC0003). */
  | 'INVALID_PHONE'
  /** Anything else: push errors (1025, 9999), our own configuration (2028, 21, 11, …), unknown codes. */
  | 'PROVIDER_ERROR';

export type ResultFlow = 'STK' | 'B2C';

const STK_REASONS: Record<string, StableReason> = {
  '1': 'INSUFFICIENT_BALANCE',
  '2': 'AMOUNT_LIMIT_EXCEEDED',
  '3': 'AMOUNT_LIMIT_EXCEEDED',
  '4': 'AMOUNT_LIMIT_EXCEEDED',
  '8': 'AMOUNT_LIMIT_EXCEEDED',
  '17': 'DUPLICATE_WITHIN_2_MIN',
  '1019': 'TIMEOUT',
  '1025': 'PROVIDER_ERROR',
  '1032': 'CANCELLED_BY_USER',
  '1037': 'PHONE_UNREACHABLE',
  '2001': 'WRONG_PIN',
  '8006': 'ACCOUNT_LOCKED',
  '9999': 'PROVIDER_ERROR',
};

// In B2C, 2001 and 8006 are about OUR initiator (its credential invalid or locked), and 1 is
// our utility account: the same numbers mean something else than in STK.
const B2C_REASONS: Record<string, StableReason> = {
  '1': 'INSUFFICIENT_BALANCE',
  '2': 'AMOUNT_LIMIT_EXCEEDED',
  '3': 'AMOUNT_LIMIT_EXCEEDED',
  '4': 'AMOUNT_LIMIT_EXCEEDED',
  '8': 'AMOUNT_LIMIT_EXCEEDED',
  '2040': 'RECIPIENT_NOT_REGISTERED',
  SFC_IC0003: 'INVALID_PHONE',
};

/**
 * The stable, partner-facing reason for a ResultCode (a number or Daraja's raw string); null
 * for 0 (success). `flow` matters: the same code means different things in STK and B2C.
 */
export function stableReason(resultCode: number | string, flow: ResultFlow = 'STK'): StableReason | null {
  const key = String(resultCode).trim();
  if (key === '0') return null;
  return (flow === 'STK' ? STK_REASONS : B2C_REASONS)[key] ?? 'PROVIDER_ERROR';
}

/**
 * B2C codes that will fail again whatever we do: the amount is outside the B2C limits, or the
 * recipient cannot receive (not registered, no such number).
 */
const B2C_PERMANENT = new Set(['2', '3', '2040', 'SFC_IC0003']);

/**
 * Whether a failed B2C payment may succeed if sent again (with a new OriginatorConversationID:
 * Daraja rejects a reused one). True for our balance (1), daily and balance limits (4, 8),
 * our account or initiator configuration (11, 21, 2001, 2006, 2028, 8006: they need ops
 * first) and unknown codes; false for 0 and for the permanent codes above.
 */
export function isRetriableB2c(resultCode: number | string): boolean {
  const key = String(resultCode).trim();
  return key !== '0' && !B2C_PERMANENT.has(key);
}
