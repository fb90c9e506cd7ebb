/** A whole payments environment for config tests; no server is asked (none listens here). */
export function paymentsEnv(): Record<string, string> {
  const here = 'http://127.0.0.1:9';
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    MONGO_URL: 'mongodb://127.0.0.1:9/',
    MONGO_DB: 'payments',
    REDIS_URL: 'redis://127.0.0.1:9',
    INTERNAL_SIGNING_SECRET: 'test-internal-signing-secret-0123',
    PAYMENTS_CALLBACK_TOKEN: '0123456789abcdef0123456789abcdef',
    MPESA_CONSUMER_KEY: 'test-consumer-key',
    MPESA_CONSUMER_SECRET: 'test-consumer-secret-0123456789',
    MPESA_SHORTCODE: '174379',
    MPESA_PASSKEY: 'test-passkey-0123456789abcdef',
    MPESA_B2C_SHORTCODE: '600980',
    MPESA_INITIATOR_NAME: 'testapi',
    MPESA_SECURITY_CREDENTIAL: 'test-security-credential-0123',
    DETERMINATIONS_URL: here,
    RATE_SOURCE_URL: here,
    POLICY_URL: here,
    MPESA_BASE_URL: here,
    PAYMENTS_CALLBACK_BASE_URL: here,
  };
}
