/**
 * What a Kubernetes Service does for the benchmarks' replicas: one address in front of a
 * service's processes, each new connection handed to the next process in turn (kube-proxy
 * spreads connections, not requests). The gateway takes one URL per service
 * (services/gateway/src/config.ts); behind this front, the requests it forwards reach every
 * replica, as they would in a cluster, rather than only the first. It runs in the bench's own
 * process, whose CPU is not counted as the platform's (a node's kube-proxy is the kernel's).
 */
import net from 'node:net';

export interface ServiceFront {
  port: number;
  close(): Promise<void>;
}

export async function startServiceFront(ports: readonly number[]): Promise<ServiceFront> {
  if (ports.length === 0) throw new Error('a service front needs at least one replica');
  let next = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(ports[next++ % ports.length] as number, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('close', () => sockets.delete(socket));
    }
    // Either side failing or closing ends the pair, as a dropped connection would.
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
