import type { TimestampZone } from './time';
import type { MpesaSimulatorOptions } from './types';

/** The options with their defaults filled in: what every handler reads. */
export interface Settings {
  port: number;
  host: string;
  consumerKey: string;
  consumerSecret: string;
  shortcode: string;
  passkey: string;
  b2cShortcode: string;
  initiatorName: string | undefined;
  securityCredential: string | undefined;
  callbackDelayMs: number;
  tokenTtlSeconds: number;
  maxRequestsPerSecond: number | undefined;
  timestampZone: TimestampZone | 'any';
  timestampSkewSeconds: number;
  b2cMinAmount: number;
  b2cMaxAmount: number;
  now: () => Date;
}

export function settingsOf(options: MpesaSimulatorOptions): Settings {
  const {
    port = 0,
    host = '127.0.0.1',
    consumerKey,
    consumerSecret,
    shortcode,
    passkey,
    b2cShortcode = options.shortcode,
    initiatorName,
    securityCredential,
    callbackDelayMs = 300,
    tokenTtlSeconds = 3600,
    maxRequestsPerSecond,
    timestampZone = 'any',
    timestampSkewSeconds = 600,
    b2cMinAmount = 10,
    b2cMaxAmount = 250_000,
    now = () => new Date(),
  } = options;
  for (const [name, value] of Object.entries({ consumerKey, consumerSecret, shortcode, passkey })) {
    if (typeof value !== 'string' || value === '')
      throw new TypeError(`startMpesaSimulator: ${name} is required`);
  }
  return {
    port,
    host,
    consumerKey,
    consumerSecret,
    shortcode,
    passkey,
    b2cShortcode,
    initiatorName,
    securityCredential,
    callbackDelayMs,
    tokenTtlSeconds,
    maxRequestsPerSecond,
    timestampZone,
    timestampSkewSeconds,
    b2cMinAmount,
    b2cMaxAmount,
    now,
  };
}
