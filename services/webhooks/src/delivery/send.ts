import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isBlockedAddress } from './target-guard';

export interface SendResult {
  /** The HTTP status, when an answer arrived. */
  status: number | null;
  /** Why the attempt failed without a status (timeout, refused, blocked address…). */
  error: string | null;
}

export interface Sender {
  post(url: string, body: string, headers: Record<string, string>): Promise<SendResult>;
  close(): void;
}

/** The longest a kept-alive socket to a partner stays idle. */
const IDLE_SOCKET_MS = 30_000;

/** How much of a partner's answer we read; the rest is not our business. */
const RESPONSE_BYTES = 4096;

/**
 * POSTs with a hard deadline covering connect, request and response, never follows
 * redirects (node's http does not), reads at most 4 KiB of the answer, and connects only
 * to addresses `lookup` approves (the SSRF check at the address actually dialled).
 * Keep-alive agents reuse connections per partner host.
 */
export function createSender(options: {
  timeoutMs: number;
  lookup: LookupFunction;
  allowInsecure: boolean;
  maxSockets?: number;
}): Sender {
  const agentOptions = {
    keepAlive: true,
    maxSockets: options.maxSockets ?? 64,
    lookup: options.lookup,
    // An idle kept-alive socket is dropped after this, or 1 s before the partner's own
    // `Keep-Alive: timeout=N` (node honours that hint only when a timeout is set). Without
    // it, a request could go out on a socket the partner is closing at that moment:
    // "socket hang up", a failed attempt. (Requests keep their own deadline, below.)
    timeout: IDLE_SOCKET_MS,
  };
  const agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) };

  return {
    post(url, body, headers) {
      return new Promise<SendResult>((resolve) => {
        let target: URL;
        try {
          target = new URL(url);
        } catch {
          resolve({ status: null, error: 'invalid webhook URL' });
          return;
        }
        const agent =
          target.protocol === 'https:'
            ? agents['https:']
            : target.protocol === 'http:' && options.allowInsecure
              ? agents['http:']
              : undefined;
        if (!agent) {
          resolve({ status: null, error: 'webhook URL must use https' });
          return;
        }
        // An IP literal is dialled without a DNS lookup, so `lookup` never sees it: check it here.
        const host = target.hostname.replace(/^\[|\]$/g, '');
        if (isIP(host) && isBlockedAddress(host, { allowInsecure: options.allowInsecure })) {
          resolve({ status: null, error: 'webhook URL resolves to a blocked address' });
          return;
        }
        let settled = false;
        const finish = (result: SendResult) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(result);
        };
        const request = (target.protocol === 'https:' ? https : http).request(target, {
          method: 'POST',
          agent,
          lookup: options.lookup,
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        });
        const timer = setTimeout(() => {
          finish({ status: null, error: `no answer within ${options.timeoutMs} ms` });
          request.destroy();
        }, options.timeoutMs);
        request.on('response', (response) => {
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > RESPONSE_BYTES) response.destroy();
          });
          const done = () => finish({ status: response.statusCode ?? null, error: null });
          response.on('end', done);
          response.on('close', done);
          response.on('error', done);
        });
        request.on('error', (err: NodeJS.ErrnoException) => {
          const reason =
            err.code === 'EWEBHOOK_BLOCKED' ? 'webhook URL resolves to a blocked address' : err.message;
          finish({ status: null, error: reason || err.code || 'request failed' });
        });
        request.end(body);
      });
    },
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
