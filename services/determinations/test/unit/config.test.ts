import { loadDeterminationsConfig } from '../../src/config';
import { generateSigningKeyPem } from '../../src/signing/keys';

const base = {
  MONGO_URL: 'mongodb://127.0.0.1:27017',
  REDIS_URL: 'redis://127.0.0.1:6379',
  INTERNAL_SIGNING_SECRET: 'a-long-enough-internal-secret',
  POLICY_URL: 'http://policy:3000/',
};
const COMPOSE_KEY = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIGxvY2FsLWRldi1kZXRlcm1pbmF0aW9ucy1rZXktMzJi
-----END PRIVATE KEY-----`;

describe('determinations config', () => {
  it('reads the defaults the docs promise', () => {
    const config = loadDeterminationsConfig({ ...base, DETERMINATION_SIGNING_KEYS: generateSigningKeyPem() });
    expect(config).toMatchObject({
      DETERMINATIONS_PORT: 3000,
      MONGO_DB: 'determinations',
      POLICY_URL: 'http://policy:3000',
      DETERMINATION_REPORT_DUE_SECONDS: 2_592_000,
      DETERMINATION_OVERDUE_SWEEP_SECONDS: 300,
      RUN_WORKERS: true,
    });
  });

  it('takes the due date and sweep interval from the environment', () => {
    const config = loadDeterminationsConfig({
      ...base,
      DETERMINATION_SIGNING_KEYS: generateSigningKeyPem(),
      DETERMINATION_REPORT_DUE_SECONDS: '60',
      DETERMINATION_OVERDUE_SWEEP_SECONDS: '5',
    });
    expect([config.DETERMINATION_REPORT_DUE_SECONDS, config.DETERMINATION_OVERDUE_SWEEP_SECONDS]).toEqual([
      60, 5,
    ]);
  });

  it('refuses to start without a usable signing key, without echoing it', () => {
    expect(() => loadDeterminationsConfig(base)).toThrow(/DETERMINATION_SIGNING_KEYS/);
    const garbage = '-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWJ1dC1ub3QtYS1rZXk=\n-----END PRIVATE KEY-----';
    expect(() => loadDeterminationsConfig({ ...base, DETERMINATION_SIGNING_KEYS: garbage })).toThrow(
      /^(?!.*c2VjcmV0).*block 1/s,
    );
  });

  it('refuses the public docker-compose key in production, and accepts it in development', () => {
    expect(() =>
      loadDeterminationsConfig({ ...base, NODE_ENV: 'production', DETERMINATION_SIGNING_KEYS: COMPOSE_KEY }),
    ).toThrow(/public docker-compose development key/);
    expect(
      loadDeterminationsConfig({ ...base, NODE_ENV: 'development', DETERMINATION_SIGNING_KEYS: COMPOSE_KEY })
        .NODE_ENV,
    ).toBe('development');
  });
});
