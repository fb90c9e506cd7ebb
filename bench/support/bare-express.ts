// The baseline for bench/gateway.ts: express 5 answering a fixed JSON body, nothing else.
import express from 'express';

const app = express();
let body = '{}';
app.post('/body', express.text({ type: 'application/json' }), (req, res) => {
  body = req.body as string;
  res.json({ ok: true });
});
app.get('/me', (_req, res) => {
  res.type('application/json').send(body);
});
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
