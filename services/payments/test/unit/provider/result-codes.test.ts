import {
  darajaTimestamp,
  fromDarajaPhone,
  isRetriableB2c,
  parseResultCode,
  stableReason,
  toDarajaPhone,
} from '../../../src/provider';

describe('stableReason', () => {
  it.each([
    [1032, 'CANCELLED_BY_USER'],
    [1037, 'PHONE_UNREACHABLE'],
    [2001, 'WRONG_PIN'],
    [1, 'INSUFFICIENT_BALANCE'],
    [1019, 'TIMEOUT'],
    [17, 'DUPLICATE_WITHIN_2_MIN'],
    [2, 'AMOUNT_LIMIT_EXCEEDED'],
    [4, 'AMOUNT_LIMIT_EXCEEDED'],
    [8006, 'ACCOUNT_LOCKED'],
    [1025, 'PROVIDER_ERROR'],
    [9999, 'PROVIDER_ERROR'],
    [2028, 'PROVIDER_ERROR'],
    ['SFC_IC0003', 'PROVIDER_ERROR'],
    [424242, 'PROVIDER_ERROR'],
    ['1032', 'CANCELLED_BY_USER'],
  ])('STK %p → %s', (code, reason) => {
    expect(stableReason(code)).toBe(reason);
    expect(stableReason(code, 'STK')).toBe(reason);
  });

  it.each([
    [1, 'INSUFFICIENT_BALANCE'],
    [3, 'AMOUNT_LIMIT_EXCEEDED'],
    [2040, 'RECIPIENT_NOT_REGISTERED'],
    ['SFC_IC0003', 'INVALID_PHONE'],
    // Our initiator's credential, not the customer's PIN, in B2C.
    [2001, 'PROVIDER_ERROR'],
    [8006, 'PROVIDER_ERROR'],
    [21, 'PROVIDER_ERROR'],
  ])('B2C %p → %s', (code, reason) => {
    expect(stableReason(code, 'B2C')).toBe(reason);
  });

  it('is null for success, in either flow and either form', () => {
    expect(stableReason(0)).toBeNull();
    expect(stableReason('0', 'B2C')).toBeNull();
  });
});

describe('isRetriableB2c', () => {
  it.each([1, 4, 8, 11, 21, 2001, 2006, 2028, 8006, '1', 777])('%p may succeed if sent again', (code) => {
    expect(isRetriableB2c(code)).toBe(true);
  });
  it.each([0, 2, 3, 2040, 'SFC_IC0003', '2040'])('%p is not retriable', (code) => {
    expect(isRetriableB2c(code)).toBe(false);
  });
});

describe('wire formats', () => {
  it('parseResultCode keeps numbers, and -1 with the raw text for non-numeric codes', () => {
    expect(parseResultCode(1032)).toEqual({ resultCode: 1032, rawResultCode: '1032' });
    expect(parseResultCode('0')).toEqual({ resultCode: 0, rawResultCode: '0' });
    expect(parseResultCode('SFC_IC0003')).toEqual({ resultCode: -1, rawResultCode: 'SFC_IC0003' });
  });

  it('converts phones between +2547… and Daraja’s 2547…', () => {
    expect(toDarajaPhone('+254711000001')).toBe('254711000001');
    expect(toDarajaPhone('+254110000001')).toBe('254110000001');
    expect(toDarajaPhone('254711000001')).toBeNull();
    expect(toDarajaPhone('+254611000001')).toBeNull();
    expect(fromDarajaPhone(254708374149)).toBe('+254708374149');
    expect(fromDarajaPhone('2547')).toBeUndefined();
  });

  it('formats the STK Timestamp in EAT by default, or UTC', () => {
    const at = new Date('2026-12-31T22:30:05Z');
    expect(darajaTimestamp(at)).toBe('20270101013005');
    expect(darajaTimestamp(at, 'UTC')).toBe('20261231223005');
  });
});
