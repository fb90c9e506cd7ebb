import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import net from 'node:net';
import { freePort, watchChild } from '@parametric/local-process';

export interface LocalRedis {
  url: string;
  kind: 'external' | 'private';
  description: string;
  /** The private server's process id (fault tests pause it with SIGSTOP); absent when external. */
  pid?: number;
  stop(): Promise<void>;
}

function findRedisServer(env: NodeJS.ProcessEnv): string {
  const explicit = env.REDIS_SERVER_BIN;
  if (explicit) return explicit;
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const bin = found.stdout.trim();
  if (found.status !== 0 || !bin) {
    throw new Error(
      'redis-server not found: install it (Debian/Ubuntu: apt-get install redis-server) or set REDIS_URL to an existing Redis',
    );
  }
  return bin;
}

export interface LocalRedisOptions {
  /**
   * Keep the private server's data here across restarts: an append-only file written every
   * second (`appendfsync everysec`), so a `kill -9` or a crash loses at most the last second of
   * queue operations (the services recover those from MongoDB: jobs carry ids, state lives
   * there). Without it, persistence is off and the data goes with the process.
   */
  dataDir?: string;
}

/**
 * `REDIS_URL` when set (nothing is started); otherwise a private `redis-server` on a free
 * loopback port, persistent only with `dataDir`, that a watchdog kills if this process dies
 * without stopping it. Never the machine's shared Redis on 6379.
 */
export async function startLocalRedis(
  env: NodeJS.ProcessEnv = process.env,
  options: LocalRedisOptions = {},
): Promise<LocalRedis> {
  if (env.REDIS_URL) {
    return {
      url: env.REDIS_URL,
      kind: 'external',
      description: `external Redis at REDIS_URL (${env.REDIS_URL.replace(/\/\/[^@/]*@/, '//***@')})`,
      stop: async () => {},
    };
  }
  const bin = findRedisServer(env);
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      const child = await launch(bin, port, options.dataDir);
      const watchdog = watchChild(child.pid);
      return {
        url: `redis://127.0.0.1:${port}`,
        kind: 'private',
        description: `private redis-server (${bin}) at redis://127.0.0.1:${port}${options.dataDir ? `, data in ${options.dataDir}` : ''}`,
        pid: child.pid,
        stop: async () => {
          watchdog.release();
          if (child.exitCode === null && child.signalCode === null) {
            const exited = once(child, 'exit');
            child.kill('SIGTERM');
            await exited;
          }
        },
      };
    } catch (err) {
      // Another process can take the port between our probe and redis binding it.
      if (attempt >= 4) throw err;
    }
  }
}

function launch(bin: string, port: number, dataDir: string | undefined): Promise<ChildProcess> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const persistence = dataDir
    ? ['--dir', dataDir, '--appendonly', 'yes', '--appendfsync', 'everysec']
    : ['--appendonly', 'no'];
  const child = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--loglevel', 'warning'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code} before accepting connections: ${stderr}`));
    };
    child.once('exit', onExit);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    let timer: NodeJS.Timeout;
    const poll = () => {
      ping(port).then((ok) => {
        if (ok) {
          child.off('exit', onExit);
          resolve(child);
        } else if (Date.now() > deadline) {
          child.off('exit', onExit);
          child.kill('SIGKILL');
          reject(new Error(`redis-server did not answer PING on port ${port} within 10 s: ${stderr}`));
        } else if (child.exitCode === null) {
          timer = setTimeout(poll, 50);
        }
      });
    };
    timer = setTimeout(poll, 20);
  });
}

/** True when a Redis answers PING on the port. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (c) => {
      reply += c.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    socket.on('error', () => done(false));
  });
}
