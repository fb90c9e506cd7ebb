import http from 'node:http';

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP request on its own connection (no keep-alive agent left open after the test). */
export function request(url: string, options: { method?: string; body?: unknown } = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const text = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = http.request(url, {
      method: options.method ?? 'GET',
      headers: text === undefined ? {} : { 'content-type': 'application/json' },
      agent: false,
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(text);
  });
}

export const ratesUrl = (base: string, currency = 'USDC') => `${base}/v2/exchange-rates?currency=${currency}`;
