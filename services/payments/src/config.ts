import { flag, loadConfig, platformService, port, positiveInt, secret } from '@parametric/config';
import { z } from 'zod';
import type { DarajaConfig } from './provider/daraja';
import { checkQuoteConfig, quoteConfig } from './quotes/config';

const url = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .transform((u) => u.replace(/\/+$/, ''));

const paymentsConfigFields = z.object({
  ...platformService('PAYMENTS', 'payments'),
  ...quoteConfig,
  /** The provider callback listener: its own port, reachable by Daraja, never by partners' keys. */
  PAYMENTS_CALLBACK_HOST: z.string().default('0.0.0.0'),
  PAYMENTS_CALLBACK_PORT: port(3001),
  /** The public base URL Daraja calls back on (the callback listener, through its ingress). */
  PAYMENTS_CALLBACK_BASE_URL: url,
  /** Secret path segment of every callback URL (Daraja signs nothing; see docs/payments.md). */
  PAYMENTS_CALLBACK_TOKEN: secret(),
  POLICY_URL: url,
  POLICY_TIMEOUT_MS: positiveInt(5_000),
  /** The determinations service: payouts read what a determination makes owed from it. */
  DETERMINATIONS_URL: url,
  DETERMINATIONS_TIMEOUT_MS: positiveInt(5_000),
  MPESA_BASE_URL: url,
  MPESA_CONSUMER_KEY: z.string().min(1, 'must be set'),
  MPESA_CONSUMER_SECRET: secret(),
  /** Paybill (STK push) shortcode and its Lipa na M-Pesa passkey. */
  MPESA_SHORTCODE: z.string().regex(/^\d{5,7}$/, 'must be a 5-7 digit shortcode'),
  MPESA_PASSKEY: secret(),
  /** B2C shortcode, initiator and its encrypted password (SecurityCredential). */
  MPESA_B2C_SHORTCODE: z.string().regex(/^\d{5,7}$/, 'must be a 5-7 digit shortcode'),
  MPESA_INITIATOR_NAME: z.string().min(1, 'must be set'),
  MPESA_SECURITY_CREDENTIAL: secret(),
  /**
   * Sandbox organizations' Daraja (docs/api.md, "Sandbox"): their premiums and payouts go here,
   * only ever to the M-Pesa simulator's test numbers. Optional: unset outside production, the
   * MPESA_ settings above serve (`npm start` points them at the simulator); unset in production,
   * sandbox organizations collect and pay nothing. Set, every MPESA_SANDBOX_ variable is needed.
   */
  MPESA_SANDBOX_BASE_URL: url.optional(),
  MPESA_SANDBOX_CONSUMER_KEY: z.string().min(1, 'must be set').optional(),
  MPESA_SANDBOX_CONSUMER_SECRET: secret().optional(),
  MPESA_SANDBOX_SHORTCODE: z
    .string()
    .regex(/^\d{5,7}$/, 'must be a 5-7 digit shortcode')
    .optional(),
  MPESA_SANDBOX_PASSKEY: secret().optional(),
  MPESA_SANDBOX_B2C_SHORTCODE: z
    .string()
    .regex(/^\d{5,7}$/, 'must be a 5-7 digit shortcode')
    .optional(),
  MPESA_SANDBOX_INITIATOR_NAME: z.string().min(1, 'must be set').optional(),
  MPESA_SANDBOX_SECURITY_CREDENTIAL: secret().optional(),
  /** Daraja's Timestamp zone (sources disagree: docs/payments.md, "Daraja: what we rely on"). */
  MPESA_TIMESTAMP_ZONE: z.enum(['EAT', 'UTC']).default('EAT'),
  MPESA_TIMEOUT_MS: positiveInt(10_000),
  MPESA_BREAKER_RESET_MS: positiveInt(30_000),
  /** Confirm every success callback with an STK query before crediting (callbacks are unsigned). */
  PAYMENTS_CONFIRM_WITH_QUERY: flag(true),
  /** A prompt with no callback this long after it was sent is resolved by STK query. */
  PAYMENTS_RECONCILE_AFTER_SECONDS: positiveInt(120),
  PAYMENTS_RECONCILE_SWEEP_SECONDS: positiveInt(60),
  /** Payouts (docs/payments.md "Payouts"): B2C attempts per payout part before it is FAILED. */
  PAYOUT_MAX_ATTEMPTS: positiveInt(5),
  /**
   * M-Pesa B2C's limits per transaction, in whole shillings (Daraja: 10 to 250,000). Less than the
   * minimum owed is a FAILED payout (`BELOW_PROVIDER_MINIMUM`); more than the maximum is paid in parts.
   */
  MPESA_B2C_MIN_AMOUNT: positiveInt(10),
  MPESA_B2C_MAX_AMOUNT: positiveInt(250_000),
  /** How long a `payout-originations` job keeps retrying (no rate, a service down) before the sweep alone does. */
  PAYOUT_ORIGINATION_RETRY_HOURS: z.coerce
    .number({ error: 'must be a number of hours' })
    .positive('must be positive')
    .default(24),
  /** How often the origination sweep looks for payable determinations without a payout. */
  PAYOUT_ORIGINATION_SWEEP_SECONDS: positiveInt(60),
  /** Determinations younger than this are left to their job by the sweep (one may still be being written). */
  PAYOUT_ORIGINATION_SETTLE_SECONDS: positiveInt(300),
  /** Wait after attempt n before the next: this × 2^(n-1) seconds (fractions allowed, for tests). */
  PAYOUT_RETRY_BASE_SECONDS: z.coerce
    .number({ error: 'must be a number of seconds' })
    .positive('must be positive')
    .default(60),
  /** B2C requests (and Transaction Status queries) started per second, across replicas. */
  MPESA_B2C_MAX_PER_SECOND: positiveInt(20),
  PAYOUT_CONCURRENCY: positiveInt(4),
  /** How often an attempt waiting for a Transaction Status answer looks for it. */
  PAYOUT_STATUS_POLL_MS: positiveInt(2_000),
  /** No Transaction Status answer this long after asking: ask again. */
  PAYOUT_STATUS_ANSWER_WAIT_SECONDS: positiveInt(120),
  /** An accepted B2C with neither a Result nor a QueueTimeOut this long: ask Transaction Status. */
  PAYOUT_RESULT_WAIT_SECONDS: positiveInt(900),
  OUTBOX_POLL_MS: positiveInt(1_000),
  /** Run the sweeps and queue workers in this process (an API-only replica sets false). */
  RUN_WORKERS: flag(true),
});

/** The variables, with the rules across them (the rate bounds in order, the B2C limits in order). */
export const paymentsConfigSchema = paymentsConfigFields.superRefine((config, ctx) => {
  checkQuoteConfig(config, ctx);
  if (config.MPESA_SANDBOX_BASE_URL !== undefined) {
    for (const name of SANDBOX_DARAJA_VARIABLES) {
      if (config[name] === undefined) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'must be set with MPESA_SANDBOX_BASE_URL' });
      }
    }
    // Sandbox money must never reach the live Daraja: an operator pasting the live address here
    // would send a sandbox organization's prompts and payouts to real phones.
    const sandboxHost = new URL(config.MPESA_SANDBOX_BASE_URL).host;
    if (sandboxHost === new URL(config.MPESA_BASE_URL).host || sandboxHost === LIVE_DARAJA_HOST) {
      ctx.addIssue({
        code: 'custom',
        path: ['MPESA_SANDBOX_BASE_URL'],
        message: `must not be the live Daraja (${sandboxHost}): sandbox money would reach real phones`,
      });
    }
  }
  if (config.MPESA_B2C_MIN_AMOUNT > config.MPESA_B2C_MAX_AMOUNT) {
    ctx.addIssue({
      code: 'custom',
      path: ['MPESA_B2C_MIN_AMOUNT'],
      message: `must not be above MPESA_B2C_MAX_AMOUNT (${config.MPESA_B2C_MAX_AMOUNT})`,
    });
  }
});

export type PaymentsConfig = z.infer<typeof paymentsConfigSchema>;

/** Safaricom's production Daraja (docs/payments.md): never a sandbox organization's. */
const LIVE_DARAJA_HOST = 'api.safaricom.co.ke';

const SANDBOX_DARAJA_VARIABLES = [
  'MPESA_SANDBOX_CONSUMER_KEY',
  'MPESA_SANDBOX_CONSUMER_SECRET',
  'MPESA_SANDBOX_SHORTCODE',
  'MPESA_SANDBOX_PASSKEY',
  'MPESA_SANDBOX_B2C_SHORTCODE',
  'MPESA_SANDBOX_INITIATOR_NAME',
  'MPESA_SANDBOX_SECURITY_CREDENTIAL',
] as const;

/** Where and as whom one environment's Daraja client calls. */
export type DarajaSettings = Pick<
  DarajaConfig,
  | 'baseUrl'
  | 'consumerKey'
  | 'consumerSecret'
  | 'shortcode'
  | 'passkey'
  | 'b2cShortcode'
  | 'initiatorName'
  | 'securityCredential'
>;

export function liveDaraja(config: PaymentsConfig): DarajaSettings {
  return {
    baseUrl: config.MPESA_BASE_URL,
    consumerKey: config.MPESA_CONSUMER_KEY,
    consumerSecret: config.MPESA_CONSUMER_SECRET,
    shortcode: config.MPESA_SHORTCODE,
    passkey: config.MPESA_PASSKEY,
    b2cShortcode: config.MPESA_B2C_SHORTCODE,
    initiatorName: config.MPESA_INITIATOR_NAME,
    securityCredential: config.MPESA_SECURITY_CREDENTIAL,
  };
}

/**
 * Sandbox organizations' Daraja: the MPESA_SANDBOX_ settings; without them the live ones outside
 * production (`same`) unless those are Safaricom's production Daraja (a staging platform on the
 * real one), and none in production: a live Daraja must never take sandbox money, whose test
 * numbers a real subscriber may hold.
 */
export function sandboxDaraja(config: PaymentsConfig): DarajaSettings | 'same' | undefined {
  if (config.MPESA_SANDBOX_BASE_URL === undefined) {
    const realDaraja = new URL(config.MPESA_BASE_URL).host === LIVE_DARAJA_HOST;
    return config.NODE_ENV === 'production' || realDaraja ? undefined : 'same';
  }
  return {
    baseUrl: config.MPESA_SANDBOX_BASE_URL,
    consumerKey: config.MPESA_SANDBOX_CONSUMER_KEY as string,
    consumerSecret: config.MPESA_SANDBOX_CONSUMER_SECRET as string,
    shortcode: config.MPESA_SANDBOX_SHORTCODE as string,
    passkey: config.MPESA_SANDBOX_PASSKEY as string,
    b2cShortcode: config.MPESA_SANDBOX_B2C_SHORTCODE as string,
    initiatorName: config.MPESA_SANDBOX_INITIATOR_NAME as string,
    securityCredential: config.MPESA_SANDBOX_SECURITY_CREDENTIAL as string,
  };
}

export function loadPaymentsConfig(env: NodeJS.ProcessEnv = process.env): PaymentsConfig {
  return loadConfig(paymentsConfigSchema, env);
}
