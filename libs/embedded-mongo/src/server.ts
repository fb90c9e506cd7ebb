import net from 'node:net';
import { ServerState } from './state';
import { TtlMonitor } from './ttl';
import { Connection } from './wire/connection';

export interface EmbeddedMongoOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  ttlMonitorSleepSecs?: number;
  /** Where connection-level events go; silent by default. */
  log?: (message: string) => void;
}

/** An in-memory MongoDB-wire-compatible server listening on a TCP port. */
export class EmbeddedMongoServer {
  readonly state: ServerState;
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly ttl: TtlMonitor;
  private nextConnectionId = 1;

  private constructor(private readonly options: EmbeddedMongoOptions) {
    this.state = new ServerState(
      options.ttlMonitorSleepSecs === undefined ? {} : { ttlMonitorSleepSecs: options.ttlMonitorSleepSecs },
    );
    this.ttl = new TtlMonitor(this.state);
    this.state.onParametersChanged = () => this.ttl.reschedule();
    const log = options.log ?? (() => {});
    this.server = net.createServer((socket) => {
      this.sockets.add(socket);
      this.state.activeConnections++;
      this.state.totalConnections++;
      socket.on('close', () => {
        this.sockets.delete(socket);
        this.state.activeConnections--;
      });
      new Connection(socket, this.state, this.nextConnectionId++, log);
    });
  }

  static async start(options: EmbeddedMongoOptions = {}): Promise<EmbeddedMongoServer> {
    const server = new EmbeddedMongoServer(options);
    await server.listen();
    return server;
  }

  private listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', () => {
        this.server.off('error', reject);
        this.ttl.start();
        resolve();
      });
    });
  }

  get port(): number {
    const address = this.server.address();
    if (!address || typeof address === 'string') throw new Error('server is not listening');
    return address.port;
  }

  get host(): string {
    return this.options.host ?? '127.0.0.1';
  }

  get uri(): string {
    const host = this.host === '0.0.0.0' ? '127.0.0.1' : this.host;
    return `mongodb://${host.includes(':') ? `[${host}]` : host}:${this.port}/`;
  }

  /** Stops listening, drops every client connection and the data. */
  async stop(): Promise<void> {
    this.ttl.stop();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.state.cursors.clear();
  }
}
