import { createApp, finishApp, listen } from '@parametric/http';
import { createLogger } from '@parametric/logger';
import express, { type Request, type Response } from 'express';

const logger = createLogger({ name: 'serve-test', level: 'silent' });

/**
 * `listen` serves an app from a server whose requests and responses are born with the app's
 * prototypes (libs/http/src/message-shapes.ts): express then has nothing to change on them, and
 * everything express and Node give a request and a response must work as on any express server.
 */
describe('listen', () => {
  it('serves requests born with the app’s prototypes, with everything express and Node give them', async () => {
    const app = createApp(logger);
    const bornWith: boolean[] = [];
    app.post('/echo/:id', (req: Request, res: Response) => {
      res.set('x-echo', 'yes');
      res.status(201).json({
        id: req.params.id,
        path: req.path,
        query: req.query,
        header: req.get('x-partner'),
        ip: req.ip,
        body: req.body,
        requestId: req.id,
      });
    });
    finishApp(app, logger);
    const http = await listen(app, 0, '127.0.0.1');
    http.server.prependListener('request', (req, res) => {
      bornWith.push(
        Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response,
      );
    });
    try {
      const res = await fetch(`${http.url}/echo/p-1?page=2`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-partner': 'coop', 'x-request-id': 'req-1' },
        body: JSON.stringify({ amount: 150 }),
      });
      expect([res.status, res.headers.get('x-echo'), res.headers.get('x-request-id')]).toEqual([
        201,
        'yes',
        'req-1',
      ]);
      expect(await res.json()).toEqual({
        id: 'p-1',
        path: '/echo/p-1',
        query: { page: '2' },
        header: 'coop',
        ip: '127.0.0.1',
        body: { amount: 150 },
        requestId: 'req-1',
      });
      // An unknown path still gets the envelope from the app's own handlers.
      const missing = await fetch(`${http.url}/nowhere`);
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
      expect(bornWith).toEqual([true, true]);
    } finally {
      await http.close();
    }
  });

  it('gives a mounted express app its own prototypes inside it and the outer app’s after it', async () => {
    const outer = createApp(logger);
    const inner = express();
    inner.get('/inside', (req, res) => {
      res.json({ inner: Object.getPrototypeOf(req) === inner.request });
    });
    outer.use('/sub', inner);
    outer.get('/sub/after', (req, res) => {
      res.json({ outer: Object.getPrototypeOf(req) === outer.request, sent: typeof res.json });
    });
    finishApp(outer, logger);
    const http = await listen(outer, 0, '127.0.0.1');
    try {
      expect(await (await fetch(`${http.url}/sub/inside`)).json()).toEqual({ inner: true });
      expect(await (await fetch(`${http.url}/sub/after`)).json()).toEqual({ outer: true, sent: 'function' });
    } finally {
      await http.close();
    }
  });
});
