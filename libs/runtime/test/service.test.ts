import { createLogger } from '@parametric/logger';
import { testMongoUrl, testRedisUrl, uniqueDatabaseName, uniqueRedisPrefix } from '@parametric/test-harness';
import { type PlatformConfig, type ServiceDeclaration, startService } from '../src';

const config = (): PlatformConfig => ({
  MONGO_URL: testMongoUrl(),
  MONGO_DB: uniqueDatabaseName('runtime'),
  REDIS_URL: testRedisUrl(),
  REDIS_PREFIX: uniqueRedisPrefix('runtime'),
  INTERNAL_SIGNING_SECRET: 'a-test-signing-secret-of-32-chars',
  REQUEST_DEADLINE_MS: 5_000,
  OPS_REQUEST_DEADLINE_MS: 5_000,
});
const logger = createLogger({ name: 'runtime-test', level: 'silent' });

/** `open` or `closed`: whether the listener still answers. */
async function state(url: string): Promise<'open' | 'closed'> {
  try {
    await fetch(`${url}/healthz`);
    return 'open';
  } catch {
    return 'closed';
  }
}

/** A service with one open route, a worker and two resources of its own, recording its stop. */
function recordingService(
  stopped: string[],
  urlOf: () => string,
): ServiceDeclaration<PlatformConfig, { init(): Promise<void> }, 'events', { greeting: string }> {
  return {
    name: 'webhooks',
    repositories: () => ({ init: async () => undefined }),
    models: () => [],
    produces: ['events'],
    queueStats: ['events'],
    build: ({ config }) => ({
      api: {
        port: 0,
        host: '127.0.0.1',
        open: (app) => {
          app.get('/hello', (_req, res) => {
            res.json({ hello: 'world' });
          });
        },
      },
      workers: () => [{ close: async () => stopped.push(`workers (http ${await state(urlOf())})`) }],
      close: [
        { close: async () => stopped.push('first resource') },
        { close: () => stopped.push('second resource') },
      ],
      expose: { greeting: `hello from ${config.REDIS_PREFIX}` },
    }),
  };
}

describe('startService', () => {
  it('serves health, metrics and the declared routes, and stops HTTP first, then workers, then resources in order', async () => {
    const stopped: string[] = [];
    let url = '';
    const settings = config();
    const service = await startService(
      recordingService(stopped, () => url),
      settings,
      logger,
    );
    url = service.listener('api').url;
    expect(service.greeting).toBe(`hello from ${settings.REDIS_PREFIX}`);

    expect(await (await fetch(`${url}/hello`)).json()).toEqual({ hello: 'world' });
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ checks: { mongo: true } });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain('http_request_duration_seconds');
    expect(metrics).toContain('service="webhooks"');
    // Partner and ops routes were not declared: nothing is mounted under `/api` beyond the open route.
    expect((await fetch(`${url}/api/webhooks`)).status).toBe(404);

    await service.stop();
    expect(stopped).toEqual(['workers (http closed)', 'first resource', 'second resource']);
    // The same stop, however often it is asked for.
    await service.stop();
    expect(stopped).toHaveLength(3);
  });

  it('an API-only replica (RUN_WORKERS false) starts no workers', async () => {
    const stopped: string[] = [];
    let url = '';
    const service = await startService(
      recordingService(stopped, () => url),
      { ...config(), RUN_WORKERS: false },
      logger,
    );
    url = service.listener('api').url;
    await service.stop();
    expect(stopped).toEqual(['first resource', 'second resource']);
  });

  it('a start that fails closes what it had opened and rejects with the cause', async () => {
    const stopped: string[] = [];
    const failing: ServiceDeclaration<PlatformConfig, { init(): Promise<void> }, never, object> = {
      name: 'webhooks',
      repositories: () => ({ init: async () => undefined }),
      models: () => [],
      produces: [],
      queueStats: [],
      build: () => ({
        close: [{ close: () => stopped.push('resource') }],
        workers: () => {
          throw new Error('worker could not start');
        },
      }),
    };
    await expect(startService(failing, config(), logger)).rejects.toThrow('worker could not start');
    expect(stopped).toEqual(['resource']);
  });
});
