import net from 'node:net';
import { freePort } from '../src';

describe('freePort', () => {
  it('gives a loopback port that is free again, so a server can bind it', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    try {
      expect((server.address() as net.AddressInfo).port).toBe(port);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
