import { b2cScript, STK_SCRIPTS } from '@parametric/mpesa-simulator';
import { paymentsConfigSchema, sandboxDaraja } from '../../src/config';
import { requireSandboxTestNumber, SANDBOX_TEST_NUMBERS } from '../../src/sandbox';
import { paymentsEnv } from './config-env';

const paymentsTestConfig = (env: Record<string, string>) =>
  paymentsConfigSchema.parse({ ...paymentsEnv(), ...env });

const DEFAULT_B2C = b2cScript('254700000000', 1);

describe('the sandbox test numbers', () => {
  it.each(SANDBOX_TEST_NUMBERS)('%s is one the M-Pesa simulator scripts an outcome for', (number) => {
    const daraja = number.slice(1);
    const scripted =
      daraja in STK_SCRIPTS || JSON.stringify(b2cScript(daraja, 1)) !== JSON.stringify(DEFAULT_B2C);
    expect(scripted).toBe(true);
  });

  it('lists every number the simulator scripts a prompt for', () => {
    for (const daraja of Object.keys(STK_SCRIPTS)) expect(SANDBOX_TEST_NUMBERS).toContain(`+${daraja}`);
  });

  it('refuses any other number for a sandbox organization only', () => {
    expect(() => requireSandboxTestNumber('sandbox', '+254712345678', 'phoneNumber')).toThrow(
      /only to the M-Pesa simulator’s test numbers/,
    );
    expect(() => requireSandboxTestNumber('sandbox', '+254711000001', 'phoneNumber')).not.toThrow();
    expect(() => requireSandboxTestNumber('live', '+254712345678', 'phoneNumber')).not.toThrow();
  });
});

describe('the sandbox Daraja configuration', () => {
  const sandbox = {
    MPESA_SANDBOX_BASE_URL: 'http://127.0.0.1:9999/',
    MPESA_SANDBOX_CONSUMER_KEY: 'sandbox-key',
    MPESA_SANDBOX_CONSUMER_SECRET: 'sandbox-secret-0123456789',
    MPESA_SANDBOX_SHORTCODE: '174379',
    MPESA_SANDBOX_PASSKEY: 'sandbox-passkey-0123456789',
    MPESA_SANDBOX_B2C_SHORTCODE: '600980',
    MPESA_SANDBOX_INITIATOR_NAME: 'sandboxapi',
    MPESA_SANDBOX_SECURITY_CREDENTIAL: 'sandbox-credential-0123456789',
  };

  it('is its own when set, the live one outside production when not, and none in production', () => {
    expect(sandboxDaraja(paymentsTestConfig(sandbox))).toMatchObject({
      baseUrl: 'http://127.0.0.1:9999',
      consumerKey: 'sandbox-key',
      initiatorName: 'sandboxapi',
    });
    expect(sandboxDaraja(paymentsTestConfig({}))).toBe('same');
    const production = paymentsTestConfig({});
    expect(sandboxDaraja({ ...production, NODE_ENV: 'production' })).toBeUndefined();
    // Outside production too, never Safaricom's production Daraja for sandbox money.
    expect(
      sandboxDaraja(paymentsTestConfig({ MPESA_BASE_URL: 'https://api.safaricom.co.ke' })),
    ).toBeUndefined();
  });

  it('refuses MPESA_SANDBOX_BASE_URL without the rest, naming each missing variable', () => {
    const { MPESA_SANDBOX_BASE_URL, MPESA_SANDBOX_PASSKEY: _missing, ...rest } = sandbox;
    expect(() => paymentsTestConfig({ MPESA_SANDBOX_BASE_URL, ...rest })).toThrow(/MPESA_SANDBOX_PASSKEY/);
  });

  it("refuses a sandbox Daraja that is the live one, by its MPESA_BASE_URL or by Safaricom's production host", () => {
    const live = paymentsTestConfig({}).MPESA_BASE_URL;
    expect(() => paymentsTestConfig({ ...sandbox, MPESA_SANDBOX_BASE_URL: live })).toThrow(
      /must not be the live Daraja/,
    );
    expect(() =>
      paymentsTestConfig({ ...sandbox, MPESA_SANDBOX_BASE_URL: 'https://api.safaricom.co.ke' }),
    ).toThrow(/must not be the live Daraja \(api\.safaricom\.co\.ke\)/);
    expect(() =>
      paymentsTestConfig({ ...sandbox, MPESA_SANDBOX_BASE_URL: 'https://sandbox.safaricom.co.ke' }),
    ).not.toThrow();
  });
});
