import net from 'node:net';

/**
 * A free TCP port on loopback: the OS picks it and we release it at once, so the caller's
 * server can bind it. Another process may take it in between; callers retry on a bind error.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
