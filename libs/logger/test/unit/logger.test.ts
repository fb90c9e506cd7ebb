import { createLogger } from '@parametric/logger';
import { captureLogs } from '@parametric/test-harness';
import { runInTrace } from '@parametric/tracing';

function capture() {
  const logs = captureLogs();
  return { ...logs, stream: logs.destination };
}

const SECRET_FIELDS = [
  'apiKey',
  'apiSecret',
  'secret',
  'webhookSecret',
  'password',
  'token',
  'keyHash',
  'secretHash',
  'privateKey',
  'CHAIN_PRIVATE_KEY',
  'CHAIN_RPC_URL',
  'DETERMINATION_SIGNING_KEYS',
  'DASHBOARD_TOKEN_KEYS',
  'adminPassword',
  'passwordHash',
  'accessToken',
  'refreshToken',
  'invitationToken',
  'invitationHash',
];

describe('createLogger', () => {
  it('writes one JSON line per entry with service set to the name', () => {
    const out = capture();
    const logger = createLogger({ name: 'gateway', destination: out.stream });
    logger.info({ organizationId: 'org-1' }, 'first');
    logger.warn('second');

    const lines = out.lines();
    expect(lines).toHaveLength(2);
    const [first, second] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(first).toMatchObject({ service: 'gateway', level: 30, msg: 'first', organizationId: 'org-1' });
    expect(second).toMatchObject({ service: 'gateway', level: 40, msg: 'second' });
    expect(typeof first?.time).toBe('string');
    expect(Number.isNaN(Date.parse(String(first?.time)))).toBe(false);
  });

  it('logs at info and above by default', () => {
    const out = capture();
    const logger = createLogger({ name: 'svc', destination: out.stream });
    logger.debug('hidden');
    logger.info('shown');
    expect(out.records().map((r) => r.msg)).toEqual(['shown']);
  });

  it('drops entries below the configured level', () => {
    const out = capture();
    const logger = createLogger({ name: 'svc', level: 'warn', destination: out.stream });
    logger.info('hidden');
    logger.warn('kept warning');
    logger.error('kept error');
    expect(out.records().map((r) => r.msg)).toEqual(['kept warning', 'kept error']);
  });

  it('writes nothing at level silent', () => {
    const out = capture();
    const logger = createLogger({ name: 'svc', level: 'silent', destination: out.stream });
    logger.error({ apiKey: 'pk_live_silent' }, 'nothing');
    expect(out.text()).toBe('');
  });

  it('keeps ordinary fields, including siblings of redacted ones', () => {
    const out = capture();
    const logger = createLogger({ name: 'svc', destination: out.stream });
    logger.info(
      {
        organizationId: 'org-42',
        amount: 1250.5,
        active: true,
        tags: ['maize', 'drought'],
        partner: { name: 'Acme Agri', apiKey: 'pk_live_sibling', address: { city: 'Nairobi' } },
      },
      'policy issued',
    );
    const [record] = out.records();
    expect(record).toMatchObject({
      msg: 'policy issued',
      organizationId: 'org-42',
      amount: 1250.5,
      active: true,
      tags: ['maize', 'drought'],
      partner: { name: 'Acme Agri', apiKey: '[Redacted]', address: { city: 'Nairobi' } },
    });
  });

  describe.each(SECRET_FIELDS)('redacts %s', (field) => {
    const value = `${field}-value-prodkey_${field.length}x9Qz`;

    it('at the top level', () => {
      const out = capture();
      createLogger({ name: 'svc', destination: out.stream }).info({ [field]: value, keep: 'yes' });
      const [record] = out.records();
      expect(record?.[field]).toBe('[Redacted]');
      expect(record?.keep).toBe('yes');
      expect(out.text()).not.toContain(value);
    });

    it('one level deep', () => {
      const out = capture();
      createLogger({ name: 'svc', destination: out.stream }).info({ partner: { [field]: value, id: 'p1' } });
      const [record] = out.records();
      expect(record?.partner).toEqual({ [field]: '[Redacted]', id: 'p1' });
      expect(out.text()).not.toContain(value);
    });

    it('two levels deep', () => {
      const out = capture();
      createLogger({ name: 'svc', destination: out.stream }).info({
        body: { webhook: { [field]: value, url: 'https://partner.example/hook' } },
      });
      const [record] = out.records();
      expect(record?.body).toEqual({
        webhook: { [field]: '[Redacted]', url: 'https://partner.example/hook' },
      });
      expect(out.text()).not.toContain(value);
    });
  });

  it('redacts the x-api-key and authorization request headers and keeps the others', () => {
    const out = capture();
    createLogger({ name: 'svc', destination: out.stream }).info(
      {
        req: {
          method: 'POST',
          url: '/v1/policies',
          headers: {
            'x-api-key': 'pk_live_header_key_123',
            authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.secret-token',
            'x-internal-signature': 'f00dfeedcafe',
            cookie: 'session=abcdef0123',
            'content-type': 'application/json',
          },
        },
      },
      'request',
    );
    const [record] = out.records();
    expect(record?.req).toEqual({
      method: 'POST',
      url: '/v1/policies',
      headers: {
        'x-api-key': '[Redacted]',
        authorization: '[Redacted]',
        'x-internal-signature': '[Redacted]',
        cookie: '[Redacted]',
        'content-type': 'application/json',
      },
    });
    for (const leaked of ['pk_live_header_key_123', 'secret-token', 'f00dfeedcafe', 'abcdef0123']) {
      expect(out.text()).not.toContain(leaked);
    }
  });

  it('redacts x-api-key and authorization in a top-level headers object', () => {
    const out = capture();
    createLogger({ name: 'svc', destination: out.stream }).info({
      headers: { 'x-api-key': 'pk_live_top_headers', authorization: 'Basic dXNlcjpwYXNz', accept: '*/*' },
    });
    const [record] = out.records();
    expect(record?.headers).toEqual({
      'x-api-key': '[Redacted]',
      authorization: '[Redacted]',
      accept: '*/*',
    });
    expect(out.text()).not.toContain('pk_live_top_headers');
    expect(out.text()).not.toContain('dXNlcjpwYXNz');
  });

  it('redacts the set-cookie response header', () => {
    const out = capture();
    createLogger({ name: 'svc', destination: out.stream }).info({
      res: { statusCode: 200, headers: { 'set-cookie': 'session=s3cr3tcookie', 'content-length': '2' } },
    });
    const [record] = out.records();
    expect(record?.res).toEqual({
      statusCode: 200,
      headers: { 'set-cookie': '[Redacted]', 'content-length': '2' },
    });
    expect(out.text()).not.toContain('s3cr3tcookie');
  });

  it('redacts secrets bound on a child logger', () => {
    const out = capture();
    const child = createLogger({ name: 'svc', destination: out.stream }).child({
      apiKey: 'pk_live_child_binding',
      organizationId: 'org-7',
    });
    child.info('from child');
    const [record] = out.records();
    expect(record).toMatchObject({ service: 'svc', organizationId: 'org-7', apiKey: '[Redacted]' });
    expect(out.text()).not.toContain('pk_live_child_binding');
  });

  it('leaves the logged object unchanged', () => {
    const out = capture();
    const payload = { apiKey: 'pk_live_untouched', partner: { secret: 'whsec_untouched' } };
    createLogger({ name: 'svc', destination: out.stream }).info(payload);
    expect(payload).toEqual({ apiKey: 'pk_live_untouched', partner: { secret: 'whsec_untouched' } });
    expect(out.text()).not.toContain('untouched');
  });
});

describe('trace fields', () => {
  it('puts the current trace and request id on every line of every logger, children included', async () => {
    const { stream, records } = capture();
    const logger = createLogger({ name: 'test', destination: stream });
    const child = logger.child({ component: 'x' });
    await runInTrace(
      { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', reqId: 'req-9' },
      async () => {
        await Promise.resolve();
        logger.info('from the service logger');
        child.warn({ detail: 1 }, 'from a child');
      },
    );
    logger.info('outside');
    const [first, second, outside] = records();
    const fields = {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      reqId: 'req-9',
    };
    expect(first).toMatchObject(fields);
    expect(second).toMatchObject({ ...fields, component: 'x', detail: 1 });
    expect(outside).not.toHaveProperty('traceId');
    expect(outside).not.toHaveProperty('reqId');
  });
});
