import net from 'node:net';
import { Persistence } from './persistence';
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
  /**
   * Keep the data in this (existing) directory across restarts, including a kill -9: it is
   * loaded at start, every change is journalled before its reply, and it is compacted on
   * `stop()`. Without it the data lives in memory only and nothing is written anywhere.
   */
  dataDir?: string;
  /** Journal size that triggers a compaction (64 MB by default). */
  compactAtBytes?: number;
  /** Recovery and compaction events; silent by default. */
  logPersistence?: (message: string, attr?: Record<string, unknown>) => void;
  /**
   * The journal could not be written (disk full, I/O error): memory is ahead of the disk.
   * The command that hit it gets no reply (its connection closes) and so does every later
   * write. The CLI exits here; in-process the default only logs.
   */
  onPersistenceFailure?: (err: Error) => void;
}

/** A MongoDB-wire-compatible server listening on a TCP port, in memory or kept in a directory. */
export class EmbeddedMongoServer {
  readonly state: ServerState;
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly ttl: TtlMonitor;
  private persistence?: Persistence;
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
    if (options.dataDir !== undefined) {
      const log = options.logPersistence;
      server.persistence = Persistence.open(options.dataDir, server.state, {
        ...(options.compactAtBytes === undefined ? {} : { compactAtBytes: options.compactAtBytes }),
        ...(log ? { log } : {}),
        onFailure: options.onPersistenceFailure ?? ((err) => options.log?.(err.message)),
      });
    }
    try {
      await server.listen();
    } catch (err) {
      server.persistence?.close();
      throw err;
    }
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

  /**
   * Stops listening and drops every client connection; in memory the data goes with it,
   * with a `dataDir` it is compacted into a snapshot and the directory is released.
   */
  async stop(): Promise<void> {
    this.ttl.stop();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.state.cursors.clear();
    const persistence = this.persistence;
    this.persistence = undefined;
    persistence?.close();
  }
}
