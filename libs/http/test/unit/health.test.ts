import { createApp, finishApp, healthRoutes, listen } from '@parametric/http';
import { createLogger } from '@parametric/logger';

const logger = createLogger({ name: 'health-test', level: 'silent' });

async function serve(
  checks: Record<string, () => Promise<boolean>>,
  timeoutMs: number,
  degraded?: Record<string, () => Promise<boolean>>,
) {
  const app = createApp(logger);
  app.use(healthRoutes(checks, { timeoutMs, ...(degraded ? { degraded } : {}) }));
  finishApp(app, logger);
  return listen(app, 0, '127.0.0.1');
}

describe('healthRoutes', () => {
  it('is ready when every check answers true in time', async () => {
    const http = await serve({ mongo: async () => true, redis: async () => true }, 200);
    try {
      const res = await fetch(`${http.url}/readyz`);
      expect([res.status, await res.json()]).toEqual([
        200,
        { status: 'ready', checks: { mongo: true, redis: true } },
      ]);
      expect((await fetch(`${http.url}/healthz`)).status).toBe(200);
    } finally {
      await http.close();
    }
  });

  it('counts a check that fails, throws or hangs past the timeout as down, and names it', async () => {
    let release: (() => void) | undefined;
    const http = await serve(
      {
        ok: async () => true,
        false: async () => false,
        throws: async () => {
          throw new Error('connection refused');
        },
        hangs: () =>
          new Promise<boolean>((resolve) => {
            release = () => resolve(true);
          }),
      },
      150,
    );
    try {
      const res = await fetch(`${http.url}/readyz`);
      expect([res.status, await res.json()]).toEqual([
        503,
        { status: 'not ready', checks: { ok: true, false: false, throws: false, hangs: false } },
      ]);
    } finally {
      release?.();
      await http.close();
    }
  });

  it('a degraded dependency that is down is listed in the body and leaves the pod ready; a required one still fails it', async () => {
    const http = await serve({ mongo: async () => true }, 150, {
      redis: async () => false,
      cache: async () => true,
    });
    const failing = await serve({ mongo: async () => false }, 150, { redis: async () => false });
    try {
      const res = await fetch(`${http.url}/readyz`);
      expect([res.status, await res.json()]).toEqual([
        200,
        { status: 'ready', checks: { mongo: true }, degraded: ['redis'] },
      ]);
      const down = await fetch(`${failing.url}/readyz`);
      expect([down.status, await down.json()]).toEqual([
        503,
        { status: 'not ready', checks: { mongo: false }, degraded: ['redis'] },
      ]);
    } finally {
      await http.close();
      await failing.close();
    }
  });
});
