import { generateEd25519KeyPem, loadEd25519Keys } from '@parametric/ed25519-keys';
import { dashboardTokenKeys, loadGatewayConfig } from '../../src/config';

/** The dashboard token keys as the gateway reads them from its environment. */

const BASE = {
  OPS_TOKEN: 'config-test-ops-token-0123',
  API_KEY_PEPPER: 'config-test-pepper-0123456',
  INTERNAL_SIGNING_SECRET: 'config-test-internal-secret',
  MONGO_URL: 'mongodb://127.0.0.1:1',
  REDIS_URL: 'redis://127.0.0.1:1',
};

const COMPOSE_KEY = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIGxvY2FsLWRldi1nYXRld2F5LWRhc2hib2FyZC1rZXlz
-----END PRIVATE KEY-----`;

describe('DASHBOARD_TOKEN_KEYS', () => {
  it('signs with the first configured key', () => {
    const pem = generateEd25519KeyPem();
    const config = loadGatewayConfig({ ...BASE, DASHBOARD_TOKEN_KEYS: pem });
    expect(dashboardTokenKeys(config).activeKid).toBe(loadEd25519Keys(pem, 't').activeKid);
  });

  it('outside production, makes a key for the process when none is set', () => {
    const config = loadGatewayConfig({ ...BASE, NODE_ENV: 'development' });
    expect(dashboardTokenKeys(config).keys).toHaveLength(1);
    expect(dashboardTokenKeys(config).activeKid).not.toBe(dashboardTokenKeys(config).activeKid);
  });

  it('in production, refuses to start without keys, or with the public docker-compose key', () => {
    expect(() => loadGatewayConfig({ ...BASE, NODE_ENV: 'production' })).toThrow(
      'DASHBOARD_TOKEN_KEYS must be set in production',
    );
    expect(() =>
      loadGatewayConfig({ ...BASE, NODE_ENV: 'production', DASHBOARD_TOKEN_KEYS: COMPOSE_KEY }),
    ).toThrow('public docker-compose development key');
    expect(() =>
      loadGatewayConfig({ ...BASE, NODE_ENV: 'development', DASHBOARD_TOKEN_KEYS: COMPOSE_KEY }),
    ).not.toThrow();
  });

  it('refuses a value that is not an Ed25519 PEM bundle, without echoing it', () => {
    expect(() => loadGatewayConfig({ ...BASE, DASHBOARD_TOKEN_KEYS: 'not-a-key-material-xyz' })).toThrow(
      /^dashboard token keys: no PEM block found/,
    );
  });
});
