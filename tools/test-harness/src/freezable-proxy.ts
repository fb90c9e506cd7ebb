import { once } from 'node:events';
import net from 'node:net';

/**
 * A TCP proxy in front of a real server (MongoDB, Redis, a service) that can be frozen: the
 * connections stay open and bytes stop moving both ways, exactly what a hung dependency looks
 * like to a client (a paused process, a network black hole), without pausing the shared
 * server other tests use.
 */
export interface FreezableProxy {
  /** `host:port` of the proxy. */
  address: string;
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

export async function freezableProxy(target: { host: string; port: number }): Promise<FreezableProxy> {
  let frozen = false;
  /** Bytes held back while frozen, per direction, delivered in order on thaw. */
  const held: Array<{ to: net.Socket; chunks: Buffer[] }> = [];
  const sockets = new Set<net.Socket>();
  const forward = (from: net.Socket, to: net.Socket) => {
    const queue = { to, chunks: [] as Buffer[] };
    held.push(queue);
    from.on('data', (chunk: Buffer) => {
      if (frozen) queue.chunks.push(chunk);
      else to.write(chunk);
    });
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    forward(client, upstream);
    forward(upstream, client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
      for (const queue of held) {
        for (const chunk of queue.chunks.splice(0)) if (!queue.to.destroyed) queue.to.write(chunk);
      }
    },
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
