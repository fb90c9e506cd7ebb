import {
  ConfigError,
  flag,
  loadConfig,
  logLevel,
  nodeEnv,
  port,
  positiveInt,
  secret,
  serviceUrl,
} from '@parametric/config';
import { z } from 'zod';

const schema = z.object({
  PORT: port(3000),
  NODE_ENV: nodeEnv,
  LOG_LEVEL: logLevel,
  RATE_LIMIT_PER_MINUTE: positiveInt(120),
  FEATURE_PAYOUTS: flag(true),
  FEATURE_DRY_RUN: flag(false),
  PRICING_URL: serviceUrl(),
  INTERNAL_SECRET: secret(),
});

const GOOD_SECRET = 'internal-secret-0123456789abcdef';

/** A valid environment with `overrides` applied (an `undefined` override unsets the variable). */
function env(overrides: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return { INTERNAL_SECRET: GOOD_SECRET, ...overrides };
}

function configErrorOf(environment: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(schema, environment);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('loadConfig accepted an invalid environment');
}

describe('loadConfig', () => {
  it('returns the defaults for every optional variable that is unset', () => {
    expect(loadConfig(schema, env())).toEqual({
      PORT: 3000,
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: 120,
      FEATURE_PAYOUTS: true,
      FEATURE_DRY_RUN: false,
      PRICING_URL: undefined,
      INTERNAL_SECRET: GOOD_SECRET,
    });
  });

  it('returns the parsed values of the variables that are set', () => {
    const config = loadConfig(
      schema,
      env({
        PORT: '8080',
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        RATE_LIMIT_PER_MINUTE: '600',
        FEATURE_PAYOUTS: 'false',
        FEATURE_DRY_RUN: 'true',
        PRICING_URL: 'https://pricing.internal:9000',
      }),
    );
    expect(config).toEqual({
      PORT: 8080,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: 600,
      FEATURE_PAYOUTS: false,
      FEATURE_DRY_RUN: true,
      PRICING_URL: 'https://pricing.internal:9000',
      INTERNAL_SECRET: GOOD_SECRET,
    });
  });

  it('ignores environment variables the schema does not name', () => {
    const config = loadConfig(schema, env({ HOME: '/root', AWS_SECRET_ACCESS_KEY: 'unrelated' }));
    expect(config).not.toHaveProperty('HOME');
    expect(config).not.toHaveProperty('AWS_SECRET_ACCESS_KEY');
  });

  it('reads process.env when no environment is passed', () => {
    const name = 'PARAMETRIC_CONFIG_TEST_PORT';
    process.env[name] = '4321';
    try {
      expect(loadConfig(z.object({ [name]: port(1) }))).toEqual({ [name]: 4321 });
    } finally {
      delete process.env[name];
    }
  });
});

describe('port', () => {
  it('coerces a numeric string to a number', () => {
    expect(loadConfig(schema, env({ PORT: '443' })).PORT).toBe(443);
  });

  it('accepts 0 (the OS picks a free port) and 65535', () => {
    expect(loadConfig(schema, env({ PORT: '0' })).PORT).toBe(0);
    expect(loadConfig(schema, env({ PORT: '65535' })).PORT).toBe(65_535);
  });

  it.each(['65536', '-1', '80.5', 'http', 'eighty'])('rejects PORT=%s', (value) => {
    expect(configErrorOf(env({ PORT: value })).message).toMatch(/^\s+PORT: /m);
  });

  it('reads an empty PORT as unset (the default), never as port 0', () => {
    // `PORT=` (e.g. `PORT: ${PORT}` in compose with PORT unset) must not silently become a random port.
    expect(loadConfig(schema, env({ PORT: '' })).PORT).toBe(loadConfig(schema, env({})).PORT);
    expect(loadConfig(schema, env({ PORT: '' })).PORT).not.toBe(0);
  });
});

describe('positiveInt', () => {
  it('coerces a numeric string to a number', () => {
    expect(loadConfig(schema, env({ RATE_LIMIT_PER_MINUTE: '1' })).RATE_LIMIT_PER_MINUTE).toBe(1);
  });

  it('reads an empty value as unset (the default)', () => {
    expect(loadConfig(schema, env({ RATE_LIMIT_PER_MINUTE: '' })).RATE_LIMIT_PER_MINUTE).toBe(
      loadConfig(schema, env({})).RATE_LIMIT_PER_MINUTE,
    );
  });

  it.each(['0', '-5', '1.5', 'many'])('rejects RATE_LIMIT_PER_MINUTE=%j', (value) => {
    expect(configErrorOf(env({ RATE_LIMIT_PER_MINUTE: value })).message).toMatch(
      /^\s+RATE_LIMIT_PER_MINUTE: /m,
    );
  });
});

describe('flag', () => {
  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('reads %s as %s', (value, expected) => {
    expect(loadConfig(schema, env({ FEATURE_PAYOUTS: value })).FEATURE_PAYOUTS).toBe(expected);
    expect(loadConfig(schema, env({ FEATURE_DRY_RUN: value })).FEATURE_DRY_RUN).toBe(expected);
  });

  it('uses the fallback when unset', () => {
    const config = loadConfig(schema, env());
    expect(config.FEATURE_PAYOUTS).toBe(true);
    expect(config.FEATURE_DRY_RUN).toBe(false);
  });

  it.each(['yes', 'no', 'TRUE', 'off', ''])('rejects %j instead of guessing', (value) => {
    expect(configErrorOf(env({ FEATURE_PAYOUTS: value })).message).toMatch(/^\s+FEATURE_PAYOUTS: /m);
  });
});

describe('serviceUrl', () => {
  it.each([
    ['http://pricing:3001/', 'http://pricing:3001'],
    ['https://pricing.example.com/api/v1/', 'https://pricing.example.com/api/v1'],
    ['https://pricing.example.com/api//', 'https://pricing.example.com/api'],
    ['http://pricing:3001', 'http://pricing:3001'],
  ])('reads %s as %s (no trailing slash)', (value, expected) => {
    expect(loadConfig(schema, env({ PRICING_URL: value })).PRICING_URL).toBe(expected);
  });

  it('is undefined when unset', () => {
    expect(loadConfig(schema, env()).PRICING_URL).toBeUndefined();
  });

  it.each([
    'ftp://pricing.example.com',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'pricing:3001',
    'not a url',
  ])('rejects the non-http URL %s', (value) => {
    expect(configErrorOf(env({ PRICING_URL: value })).message).toMatch(/^\s+PRICING_URL: /m);
  });
});

describe('secret', () => {
  it('accepts a value of 16 characters or more', () => {
    expect(loadConfig(schema, env({ INTERNAL_SECRET: '0123456789abcdef' })).INTERNAL_SECRET).toBe(
      '0123456789abcdef',
    );
  });

  it('rejects a value shorter than 16 characters', () => {
    expect(configErrorOf(env({ INTERNAL_SECRET: '0123456789abcde' })).message).toMatch(
      /^\s+INTERNAL_SECRET: /m,
    );
  });

  it('rejects an unset secret', () => {
    expect(configErrorOf(env({ INTERNAL_SECRET: undefined })).message).toMatch(/^\s+INTERNAL_SECRET: /m);
  });
});

describe('ConfigError', () => {
  const badValues = {
    PORT: '99999',
    NODE_ENV: 'staging-prodkey_51HxEnvLeak',
    LOG_LEVEL: 'verbose',
    RATE_LIMIT_PER_MINUTE: '-3',
    FEATURE_PAYOUTS: 'maybe',
    PRICING_URL: 'ftp://admin:Sup3rS3cretPw@pricing.internal',
    INTERNAL_SECRET: 'prodkey_9f8e7d',
  };

  it('is thrown for a bad environment and is a ConfigError', () => {
    expect(() => loadConfig(schema, badValues)).toThrow(ConfigError);
    const error = configErrorOf(badValues);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ConfigError');
  });

  it('names each bad variable on its own line', () => {
    const { message } = configErrorOf(badValues);
    for (const name of Object.keys(badValues)) {
      expect(message).toMatch(new RegExp(`^\\s+${name}: \\S`, 'm'));
    }
  });

  it('does not name the variables that are fine', () => {
    const { message } = configErrorOf(env({ PORT: 'eighty', FEATURE_DRY_RUN: 'true' }));
    expect(message).toMatch(/PORT/);
    expect(message).not.toMatch(/FEATURE_DRY_RUN|INTERNAL_SECRET|NODE_ENV/);
  });

  it('never contains the bad values', () => {
    const { message, stack } = configErrorOf(badValues);
    for (const value of Object.values(badValues)) {
      expect(message).not.toContain(value);
      expect(stack ?? '').not.toContain(value);
    }
    expect(message).not.toContain('Sup3rS3cretPw');
    expect(message).not.toContain('prodkey');
  });
});
