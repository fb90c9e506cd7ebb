import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, LookupFunction, TcpNetConnectOpts } from 'node:net';
import {
  checkWebhookTarget,
  guardedLookup,
  isBlockedAddress,
  type TargetPolicy,
} from '../../src/delivery/target-guard';

const PUBLIC_V4 = '93.184.215.14';
const PUBLIC_V6 = '2606:4700::1111';

/** A resolver that answers from a fixed list and records which names it was asked. */
function fixedResolver(...addresses: string[]): NonNullable<TargetPolicy['resolve']> & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    return addresses;
  };
  return Object.assign(resolve, { calls });
}

function notFound(hostname: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
  error.code = 'ENOTFOUND';
  return error;
}

interface LookupResult {
  error: NodeJS.ErrnoException | null;
  address?: string | LookupAddress[];
  family?: number;
}

function callLookup(lookup: LookupFunction, hostname: string, options: LookupOptions): Promise<LookupResult> {
  return new Promise((resolve) => {
    lookup(hostname, options, (error, address, family) => resolve({ error, address, family }));
  });
}

/** A real loopback HTTP server that records every connection and request it receives. */
interface Recorder {
  port: number;
  connections: number;
  requests: string[];
  close(): Promise<void>;
}

async function startRecorder(): Promise<Recorder> {
  const server = http.createServer((req, res) => {
    recorder.requests.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => res.end('received'));
  });
  const recorder: Recorder = {
    port: 0,
    connections: 0,
    requests: [],
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
  server.on('connection', () => {
    recorder.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  recorder.port = (server.address() as AddressInfo).port;
  return recorder;
}

/** `http.request` hands these socket options to `net.connect`; the request typings omit them. */
type PostOptions = http.RequestOptions & Pick<TcpNetConnectOpts, 'autoSelectFamily'>;

/** POSTs a small body with a fresh connection (no pooled sockets survive the test). */
function post(url: string, options: PostOptions = {}): Promise<{ status: number; body: string }> {
  const transport = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, { method: 'POST', agent: false, ...options }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end('{"event":"policy.created"}');
  });
}

describe('isBlockedAddress', () => {
  // [address, blocked in production, blocked with allowInsecure]
  const table: Array<[string, boolean, boolean]> = [
    ['127.0.0.1', true, false],
    ['127.255.255.254', true, false],
    ['::1', true, false],
    ['::ffff:127.0.0.1', true, false],
    ['::ffff:7f00:1', true, false],
    ['10.1.2.3', true, true],
    ['172.16.0.1', true, true],
    ['172.31.255.255', true, true],
    ['172.32.0.1', false, false],
    ['192.168.1.1', true, true],
    ['169.254.169.254', true, true],
    ['169.254.170.2', true, true],
    ['169.254.1.1', true, true],
    ['100.64.0.1', true, true],
    ['100.100.100.200', true, true],
    ['168.63.129.16', true, true],
    ['0.0.0.0', true, true],
    ['0.1.2.3', true, true],
    ['192.0.2.10', true, true],
    ['198.18.0.1', true, true],
    ['224.0.0.1', true, true],
    ['240.0.0.1', true, true],
    ['255.255.255.255', true, true],
    ['::', true, true],
    ['fc00::1', true, true],
    ['fd12::1', true, true],
    ['fd00:ec2::254', true, true],
    ['fe80::1', true, true],
    ['fe80::1%eth0', true, true],
    ['fec0::1', true, true],
    ['ff02::1', true, true],
    ['::ffff:10.0.0.1', true, true],
    ['::ffff:a9fe:a9fe', true, true],
    ['::ffff:0:10.0.0.1', true, true],
    ['::127.0.0.1', true, true],
    ['64:ff9b::10.0.0.1', true, true],
    ['64:ff9b::7f00:1', true, true],
    ['64:ff9b:1::a00:1', true, true],
    ['2002:a00:1::1', true, true],
    ['2002:a9fe:a9fe::', true, true],
    ['2002:7f00:1::1', true, true],
    ['2001:db8::1', true, true],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', true, true],
    ['::ffff:8.8.8.8', false, false],
    ['64:ff9b::8.8.8.8', false, false],
    ['2002:808:808::1', false, false],
    ['8.8.8.8', false, false],
    ['1.1.1.1', false, false],
    [PUBLIC_V4, false, false],
    ['2606:4700::1111', false, false],
    ['2a00:1450:4001:81c::200e', false, false],
    ['2606:4700:0:0:0:0:0:1111', false, false],
    ['not-an-ip', true, true],
    ['', true, true],
    ['010.0.0.1', true, true],
    ['[::1]', true, true],
  ];

  it.each(table)('%s → blocked %s (production), %s (allowInsecure)', (address, strict, insecure) => {
    expect(isBlockedAddress(address, { allowInsecure: false })).toBe(strict);
    expect(isBlockedAddress(address, { allowInsecure: true })).toBe(insecure);
  });
});

describe('checkWebhookTarget', () => {
  const HOST_IS_PRIVATE = 'webhook URL host is a private or reserved address';
  const RESOLVES_PRIVATE = 'webhook URL host resolves to a private or reserved address';

  it('accepts an https URL whose host resolves to a public address', async () => {
    const resolve = fixedResolver(PUBLIC_V4, PUBLIC_V6);
    const check = await checkWebhookTarget('https://hooks.partner.example/path?x=1', {
      allowInsecure: false,
      resolve,
    });
    expect(check).toEqual({
      ok: true,
      url: new URL('https://hooks.partner.example/path?x=1'),
      addresses: [PUBLIC_V4, PUBLIC_V6],
    });
    expect(resolve.calls).toEqual(['hooks.partner.example']);
  });

  it('accepts a public IP literal without resolving it, brackets stripped', async () => {
    const resolve = fixedResolver('10.0.0.1');
    const v6 = await checkWebhookTarget('https://[2606:4700::1111]:8443/hooks', {
      allowInsecure: false,
      resolve,
    });
    expect(v6).toMatchObject({ ok: true, addresses: ['2606:4700::1111'] });
    const v4 = await checkWebhookTarget('https://8.8.8.8/hooks', { allowInsecure: false, resolve });
    expect(v4).toMatchObject({ ok: true, addresses: ['8.8.8.8'] });
    expect(resolve.calls).toEqual([]);
  });

  it('refuses http unless allowInsecure, and other schemes always', async () => {
    const resolve = fixedResolver(PUBLIC_V4);
    expect(
      await checkWebhookTarget('http://hooks.partner.example/', { allowInsecure: false, resolve }),
    ).toEqual({
      ok: false,
      reason: 'webhook URL must use https',
    });
    expect(
      await checkWebhookTarget('http://hooks.partner.example/', { allowInsecure: true, resolve }),
    ).toMatchObject({ ok: true });
    for (const raw of [
      'ftp://hooks.partner.example/',
      'file:///etc/passwd',
      'gopher://hooks.partner.example/',
      'ws://hooks.partner.example/',
      'javascript:alert(1)',
    ]) {
      expect(await checkWebhookTarget(raw, { allowInsecure: false, resolve })).toEqual({
        ok: false,
        reason: 'webhook URL must use https',
      });
      expect(await checkWebhookTarget(raw, { allowInsecure: true, resolve })).toEqual({
        ok: false,
        reason: 'webhook URL must use https or http',
      });
    }
  });

  it.each([
    'https://user:secret@hooks.partner.example/',
    'https://user@hooks.partner.example/',
    'https://:secret@hooks.partner.example/',
  ])('refuses credentials in %s', async (raw) => {
    expect(await checkWebhookTarget(raw, { allowInsecure: true, resolve: fixedResolver(PUBLIC_V4) })).toEqual(
      {
        ok: false,
        reason: 'webhook URL must not contain credentials',
      },
    );
  });

  it.each([
    '/hooks',
    'hooks.partner.example/hooks',
    '//hooks.partner.example/hooks',
    'not a url',
    'https://',
    'https://exa mple.com/',
    'https://[::1/',
    'https://1.2.3.4.5/',
  ])('refuses a relative or malformed URL: %s', async (raw) => {
    const check = await checkWebhookTarget(raw, { allowInsecure: false, resolve: fixedResolver(PUBLIC_V4) });
    expect(check.ok).toBe(false);
    if (!check.ok)
      expect(check.reason).toMatch(/^webhook URL (must be a valid absolute URL|must not contain)/);
  });

  it('refuses an empty URL, whitespace, a fragment and a URL over 2048 characters', async () => {
    const policy: TargetPolicy = { allowInsecure: false, resolve: fixedResolver(PUBLIC_V4) };
    expect(await checkWebhookTarget('', policy)).toEqual({ ok: false, reason: 'webhook URL is required' });
    expect(await checkWebhookTarget(' https://hooks.partner.example/', policy)).toEqual({
      ok: false,
      reason: 'webhook URL must not contain whitespace or control characters',
    });
    expect(await checkWebhookTarget('https://hooks.partner.example/\n', policy)).toMatchObject({ ok: false });
    expect(await checkWebhookTarget('https://hooks.partner.example/x#section', policy)).toEqual({
      ok: false,
      reason: 'webhook URL must not contain a fragment (#...)',
    });
    expect(await checkWebhookTarget('https://hooks.partner.example/x#', policy)).toMatchObject({ ok: false });

    const base = 'https://hooks.partner.example/';
    const longest = base + 'a'.repeat(2048 - base.length);
    expect(await checkWebhookTarget(longest, policy)).toMatchObject({ ok: true });
    expect(await checkWebhookTarget(`${longest}a`, policy)).toEqual({
      ok: false,
      reason: 'webhook URL must be at most 2048 characters',
    });
    // Percent-encoding during parsing can push a short input over the limit.
    expect(await checkWebhookTarget(`${base}${'é'.repeat(1000)}`, policy)).toMatchObject({ ok: false });
  });

  it.each([
    'https://127.0.0.1/',
    'https://127.0.0.1:8443/hooks',
    'https://2130706433/',
    'https://0x7f.0.0.1/',
    'https://0x7f000001/',
    'https://0177.0.0.1/',
    'https://127.1/',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://10.0.0.5/',
    'https://167772165/',
    'https://[::ffff:10.0.0.5]/',
    'https://192.168.0.1/',
    'https://169.254.169.254/latest/meta-data/',
    'https://0xa9fea9fe/',
    'https://2852039166/',
    'https://[fd00:ec2::254]/',
    'https://100.100.100.200/',
    'https://0.0.0.0/',
    'https://0/',
    'https://[::]/',
    'https://[64:ff9b::10.0.0.1]/',
    'https://[2002:a9fe:a9fe::1]/',
    'https://[fe80::1]/',
    'https://255.255.255.255/',
  ])('refuses the IP literal %s without resolving it', async (raw) => {
    const resolve = fixedResolver(PUBLIC_V4);
    expect(await checkWebhookTarget(raw, { allowInsecure: false, resolve })).toEqual({
      ok: false,
      reason: HOST_IS_PRIVATE,
    });
    expect(resolve.calls).toEqual([]);
  });

  it.each([
    [['10.0.0.7']],
    [['127.0.0.1']],
    [['::1']],
    [['169.254.169.254']],
    [[PUBLIC_V4, '192.168.0.10']],
    [[PUBLIC_V6, '::ffff:127.0.0.1']],
    [['fd00:ec2::254', PUBLIC_V4]],
    [['not-an-address']],
  ])('refuses a name that resolves to %j', async (addresses) => {
    const resolve = fixedResolver(...addresses);
    expect(
      await checkWebhookTarget('https://hooks.partner.example/', { allowInsecure: false, resolve }),
    ).toEqual({
      ok: false,
      reason: RESOLVES_PRIVATE,
    });
    expect(resolve.calls).toEqual(['hooks.partner.example']);
  });

  it('refuses a name that cannot be resolved', async () => {
    const throwing: TargetPolicy = {
      allowInsecure: false,
      resolve: async (hostname) => {
        throw notFound(hostname);
      },
    };
    const unresolved = { ok: false, reason: 'webhook URL host could not be resolved' };
    expect(await checkWebhookTarget('https://nowhere.partner.example/', throwing)).toEqual(unresolved);
    const empty: TargetPolicy = { allowInsecure: false, resolve: fixedResolver() };
    expect(await checkWebhookTarget('https://nowhere.partner.example/', empty)).toEqual(unresolved);
  });

  it.each([
    [
      'https://metadata.google.internal/computeMetadata/v1/',
      'webhook URL host must not be a cloud metadata service',
    ],
    ['https://METADATA.Google.Internal./', 'webhook URL host must not be a cloud metadata service'],
    ['https://metadata/', 'webhook URL host must not be a cloud metadata service'],
    ['https://metadata.goog/', 'webhook URL host must not be a cloud metadata service'],
    ['https://instance-data/', 'webhook URL host must not be a cloud metadata service'],
    ['https://instance-data.ec2.internal/', 'webhook URL host must not be a cloud metadata service'],
    ['https://ip-10-0-0-5.eu-west-1.compute.internal/', 'webhook URL host must be a public DNS name'],
    ['https://billing.default.svc/', 'webhook URL host must be a public DNS name'],
    ['https://redis.default.svc.cluster.local/', 'webhook URL host must be a public DNS name'],
    ['https://printer.local/', 'webhook URL host must be a public DNS name'],
    ['https://router.home.arpa/', 'webhook URL host must be a public DNS name'],
    ['https://gateway/', 'webhook URL host must be a fully qualified public DNS name'],
    ['https://localhost/', 'webhook URL host must not be localhost'],
    ['https://api.localhost/', 'webhook URL host must not be localhost'],
  ])('refuses the host name in %s before resolving it', async (raw, reason) => {
    // The resolver would say "public": only the name rule can refuse these.
    const resolve = fixedResolver(PUBLIC_V4);
    expect(await checkWebhookTarget(raw, { allowInsecure: false, resolve })).toEqual({ ok: false, reason });
    expect(resolve.calls).toEqual([]);
  });

  describe('with allowInsecure', () => {
    it('accepts http to a loopback literal and to localhost', async () => {
      const loopback = fixedResolver('127.0.0.1', '::1');
      expect(
        await checkWebhookTarget('http://127.0.0.1:4000/hooks', { allowInsecure: true, resolve: loopback }),
      ).toEqual({ ok: true, url: new URL('http://127.0.0.1:4000/hooks'), addresses: ['127.0.0.1'] });
      expect(await checkWebhookTarget('http://[::1]:4000/hooks', { allowInsecure: true })).toMatchObject({
        ok: true,
        addresses: ['::1'],
      });
      expect(
        await checkWebhookTarget('http://localhost:4000/', { allowInsecure: true, resolve: loopback }),
      ).toEqual({ ok: true, url: new URL('http://localhost:4000/'), addresses: ['127.0.0.1', '::1'] });
      expect(loopback.calls).toEqual(['localhost']);
    });

    it('resolves localhost with the system resolver when none is injected', async () => {
      const check = await checkWebhookTarget('http://localhost:4000/', { allowInsecure: true });
      expect(check.ok).toBe(true);
      if (check.ok) {
        expect(check.addresses.length).toBeGreaterThan(0);
        for (const address of check.addresses) expect(['127.0.0.1', '::1']).toContain(address);
      }
    });

    it.each([
      ['http://169.254.169.254/', HOST_IS_PRIVATE],
      ['http://10.0.0.5/', HOST_IS_PRIVATE],
      ['http://[::ffff:10.0.0.5]/', HOST_IS_PRIVATE],
      ['http://[fd00:ec2::254]/', HOST_IS_PRIVATE],
      ['http://0.0.0.0:4000/', HOST_IS_PRIVATE],
      ['http://[64:ff9b::7f00:1]/', HOST_IS_PRIVATE],
      ['http://metadata.google.internal/', 'webhook URL host must not be a cloud metadata service'],
      ['http://webhook-receiver:4000/', 'webhook URL host must be a fully qualified public DNS name'],
    ])('still refuses %s', async (raw, reason) => {
      const resolve = fixedResolver('127.0.0.1');
      expect(await checkWebhookTarget(raw, { allowInsecure: true, resolve })).toEqual({ ok: false, reason });
    });

    it('still refuses localhost when it resolves to a private address', async () => {
      const resolve = fixedResolver('127.0.0.1', '10.0.0.9');
      expect(await checkWebhookTarget('http://localhost:4000/', { allowInsecure: true, resolve })).toEqual({
        ok: false,
        reason: RESOLVES_PRIVATE,
      });
    });
  });
});

describe('guardedLookup', () => {
  describe('called directly', () => {
    it('honours all: true, returning every address like dns.lookup', async () => {
      const lookup = guardedLookup({ allowInsecure: false, resolve: fixedResolver(PUBLIC_V4, PUBLIC_V6) });
      expect(await callLookup(lookup, 'hooks.partner.example', { all: true })).toEqual({
        error: null,
        address: [
          { address: PUBLIC_V4, family: 4 },
          { address: PUBLIC_V6, family: 6 },
        ],
        family: undefined,
      });
    });

    it('returns one address and its family without all, honouring options.family', async () => {
      const lookup = guardedLookup({ allowInsecure: false, resolve: fixedResolver(PUBLIC_V4, PUBLIC_V6) });
      expect(await callLookup(lookup, 'hooks.partner.example', {})).toEqual({
        error: null,
        address: PUBLIC_V4,
        family: 4,
      });
      expect(await callLookup(lookup, 'hooks.partner.example', { family: 6 })).toEqual({
        error: null,
        address: PUBLIC_V6,
        family: 6,
      });
      expect(await callLookup(lookup, 'hooks.partner.example', { family: 'IPv6', all: true })).toEqual({
        error: null,
        address: [{ address: PUBLIC_V6, family: 6 }],
        family: undefined,
      });
      const v4only = guardedLookup({ allowInsecure: false, resolve: fixedResolver(PUBLIC_V4) });
      const { error } = await callLookup(v4only, 'hooks.partner.example', { family: 6 });
      expect(error?.code).toBe('ENOTFOUND');
    });

    it('matches dns.lookup shape on the default (system) path', async () => {
      const lookup = guardedLookup({ allowInsecure: true });
      for (const options of [{ all: true }, {}, { family: 4 }] satisfies LookupOptions[]) {
        const expected = await new Promise<LookupResult>((resolve) =>
          dnsLookup('localhost', options, (error, address, family) => resolve({ error, address, family })),
        );
        expect(await callLookup(lookup, 'localhost', options)).toEqual(expected);
      }
    });

    it('fails with EWEBHOOK_BLOCKED when any address is blocked, naming only the host', async () => {
      const lookup = guardedLookup({ allowInsecure: false, resolve: fixedResolver(PUBLIC_V4, '10.0.0.1') });
      for (const options of [{ all: true }, {}, { family: 4 }] satisfies LookupOptions[]) {
        const { error } = await callLookup(lookup, 'hooks.partner.example', options);
        expect(error).toBeInstanceOf(Error);
        expect(error?.code).toBe('EWEBHOOK_BLOCKED');
        expect(error?.message).toContain('hooks.partner.example');
        expect(error?.message).not.toContain('10.0.0.1');
      }
    });

    it('blocks on the system path too, and blocks refused names without resolving them', async () => {
      const system = guardedLookup({ allowInsecure: false });
      expect((await callLookup(system, '127.0.0.1', { all: true })).error?.code).toBe('EWEBHOOK_BLOCKED');
      expect((await callLookup(system, 'localhost', {})).error?.code).toBe('EWEBHOOK_BLOCKED');

      const resolve = fixedResolver(PUBLIC_V4);
      const injected = guardedLookup({ allowInsecure: true, resolve });
      expect((await callLookup(injected, 'metadata.google.internal', {})).error?.code).toBe(
        'EWEBHOOK_BLOCKED',
      );
      expect(resolve.calls).toEqual([]);
    });

    it('passes resolution failures through', async () => {
      const lookup = guardedLookup({
        allowInsecure: false,
        resolve: async (hostname) => {
          throw notFound(hostname);
        },
      });
      const { error } = await callLookup(lookup, 'nowhere.partner.example', { all: true });
      expect(error?.code).toBe('ENOTFOUND');
    });
  });

  describe('with a real request to a loopback server', () => {
    let server: Recorder;

    beforeEach(async () => {
      server = await startRecorder();
    });

    afterEach(async () => {
      await server.close();
    });

    /** Proves, after the fact, that nothing reached the server before this plain control request. */
    async function expectOnlyControlRequest(): Promise<void> {
      const control = await post(`http://127.0.0.1:${server.port}/control`);
      expect(control.status).toBe(200);
      expect(server.requests).toEqual(['POST /control']);
      expect(server.connections).toBe(1);
    }

    it.each([true, false])(
      'refuses to connect without allowInsecure (autoSelectFamily %s)',
      async (autoSelectFamily) => {
        const lookup = guardedLookup({ allowInsecure: false, resolve: fixedResolver('127.0.0.1') });
        await expect(
          post(`http://hooks.partner.example:${server.port}/events`, { lookup, autoSelectFamily }),
        ).rejects.toMatchObject({ code: 'EWEBHOOK_BLOCKED' });
        await expectOnlyControlRequest();
      },
    );

    it.each([true, false])('delivers with allowInsecure (autoSelectFamily %s)', async (autoSelectFamily) => {
      const resolve = fixedResolver('127.0.0.1');
      const lookup = guardedLookup({ allowInsecure: true, resolve });
      const response = await post(`http://hooks.partner.example:${server.port}/events`, {
        lookup,
        autoSelectFamily,
      });
      expect(response).toEqual({ status: 200, body: 'received' });
      expect(server.requests).toEqual(['POST /events']);
      expect(resolve.calls).toEqual(['hooks.partner.example']);
    });

    it('delivers to localhost through the system resolver with allowInsecure', async () => {
      const response = await post(`http://localhost:${server.port}/events`, {
        lookup: guardedLookup({ allowInsecure: true }),
        family: 4,
      });
      expect(response.status).toBe(200);
      expect(server.requests).toEqual(['POST /events']);
    });

    it('guards every connection of an Agent configured with it', async () => {
      const agent = new http.Agent({ lookup: guardedLookup({ allowInsecure: false }) });
      try {
        await expect(post(`http://localhost:${server.port}/events`, { agent })).rejects.toMatchObject({
          code: 'EWEBHOOK_BLOCKED',
        });
      } finally {
        agent.destroy();
      }
      await expectOnlyControlRequest();
    });

    it('catches DNS rebinding: public at check time, loopback at connect time', async () => {
      const answers = [[PUBLIC_V4], ['127.0.0.1']];
      const asked: string[] = [];
      const policy: TargetPolicy = {
        allowInsecure: false,
        resolve: async (hostname) => {
          asked.push(hostname);
          return answers.shift() ?? ['127.0.0.1'];
        },
      };
      const target = `https://hooks.partner.example:${server.port}/events`;

      const check = await checkWebhookTarget(target, policy);
      expect(check).toMatchObject({ ok: true, addresses: [PUBLIC_V4] });

      await expect(post(target, { lookup: guardedLookup(policy) })).rejects.toMatchObject({
        code: 'EWEBHOOK_BLOCKED',
      });
      expect(asked).toEqual(['hooks.partner.example', 'hooks.partner.example']);
      await expectOnlyControlRequest();
    });
  });
});
