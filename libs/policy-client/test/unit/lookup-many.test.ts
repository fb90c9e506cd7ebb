import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { policyLookupMany } from '../../src';

/** A stand-in policy service answering every request with `status` and `body`. */
async function policyService(
  status: number,
  body: unknown,
): Promise<{ url: string; server: Server; asked: unknown[] }> {
  const asked: unknown[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      asked.push({ method: req.method, url: req.url, body: raw ? JSON.parse(raw) : undefined });
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, asked };
}

const lookupAt = (policyUrl: string) =>
  policyLookupMany({ policyUrl, signingSecret: 's'.repeat(32), timeoutMs: 2_000 });

describe('policyLookupMany: a batch’s policies in one request', () => {
  it('asks once for all ids and numbers, and asks nothing for none', async () => {
    const service = await policyService(200, { success: true, data: { policies: [] } });
    try {
      const lookup = lookupAt(service.url);
      expect(await lookup({ policyIds: [], policyNumbers: [] })).toEqual([]);
      expect(service.asked).toEqual([]);
      expect(await lookup({ policyIds: ['a'], policyNumbers: ['KE-202611-A1B2C3'] })).toEqual([]);
      expect(service.asked).toEqual([
        {
          method: 'POST',
          url: '/ops/policies/lookup',
          body: { policyIds: ['a'], policyNumbers: ['KE-202611-A1B2C3'] },
        },
      ]);
    } finally {
      service.server.closeAllConnections();
      service.server.close();
    }
  });

  it.each([
    ['answers 500', 500, { success: false }],
    ['refuses the request (400)', 400, { success: false }],
    ['answers another shape', 200, { success: true, data: { policies: [{ id: 1 }] } }],
  ])(
    'is 503 SERVICE_UNAVAILABLE, never “none found”, when the policy service %s',
    async (_what, status, body) => {
      const service = await policyService(status, body);
      try {
        await expect(lookupAt(service.url)({ policyIds: ['a'], policyNumbers: [] })).rejects.toMatchObject({
          code: 'SERVICE_UNAVAILABLE',
          status: 503,
        });
      } finally {
        service.server.closeAllConnections();
        service.server.close();
      }
    },
  );

  it('is 503 when the policy service does not answer at all', async () => {
    const service = await policyService(200, {});
    const { url } = service;
    await new Promise((resolve) => service.server.close(resolve));
    await expect(lookupAt(url)({ policyIds: ['a'], policyNumbers: [] })).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
    });
  });
});
