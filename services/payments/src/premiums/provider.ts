/**
 * What premium collection needs of the mobile-money provider (the Daraja client in
 * `../provider` implements it). Errors are the client's `DarajaError`; any error means the
 * provider could not be asked.
 */
export interface PremiumProvider {
  stkPush(i: {
    amount: number;
    phone: string;
    accountReference: string;
    description: string;
    callbackUrl: string;
  }): Promise<{ merchantRequestId: string; checkoutRequestId: string; customerMessage: string }>;
  stkQuery(
    checkoutRequestId: string,
  ): Promise<{ state: 'PENDING' } | { state: 'DONE'; resultCode: number; resultDesc: string }>;
}
