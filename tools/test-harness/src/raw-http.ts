import { connect } from 'node:net';

export interface RawAnswer {
  /** The status line's code; 0 when the connection closed without an answer. */
  status: number;
  /** The JSON body, when it parsed. */
  // biome-ignore lint/suspicious/noExplicitAny: answers are arbitrary JSON that assertions walk into
  body?: any;
  /** Why there is no status or body: the socket error, or what came instead. */
  error?: string;
}

/**
 * One JSON POST on a connection of its own (`Connection: close`), written on raw sockets so a
 * test knows the whole request was sent (`written`) before it, say, signals the server.
 * `answer` settles when the connection closes, with whatever the server said.
 */
export function rawPost(
  port: number,
  path: string,
  body: unknown,
): { written: Promise<void>; answer: Promise<RawAnswer> } {
  const payload = JSON.stringify(body);
  const socket = connect(port, '127.0.0.1');
  const written = new Promise<void>((resolve, reject) => {
    socket.once('connect', () =>
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`,
        (err) => (err ? reject(err) : resolve()),
      ),
    );
    socket.once('error', reject);
  });
  written.catch(() => undefined);
  const answer = new Promise<RawAnswer>((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', (err) => resolve({ status: 0, error: err.message }));
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      if (status === 0) {
        resolve({ status: 0, error: text === '' ? 'closed without an answer' : text.slice(0, 200) });
        return;
      }
      try {
        resolve({ status, body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) });
      } catch {
        resolve({ status, error: 'unreadable body' });
      }
    });
  });
  return { written, answer };
}
