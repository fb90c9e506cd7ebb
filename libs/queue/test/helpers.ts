import { randomUUID } from 'node:crypto';
import { createEvent, type EventEnvelope } from '@parametric/events';
import { eventually } from '@parametric/test-harness';
import type { Redis } from 'ioredis';

export function kybVerified(): EventEnvelope<'kyb.verified'> {
  const orgId = randomUUID();
  return createEvent('kyb.verified', orgId, { organizationId: orgId, kybStatus: 'VERIFIED' });
}

/** Names of the server's client connections that start with `prefix`. */
export async function clientNames(redis: Redis, prefix: string): Promise<string[]> {
  const list = String(await redis.client('LIST'));
  return list
    .split('\n')
    .map((line) => /(?:^| )name=(\S*)/.exec(line)?.[1] ?? '')
    .filter((name) => name.startsWith(prefix));
}

/**
 * Resolves once no connection named with `prefix` is left. A dropped socket can take the
 * server a moment to notice, so this waits for that rather than sampling once; a leak never
 * clears and fails with the names of the connections still open.
 */
export async function connectionsGone(redis: Redis, prefix: string): Promise<void> {
  await eventually(async () => expect(await clientNames(redis, prefix)).toEqual([]), {
    interval: 20,
    message: `connections named ${prefix}* closed`,
  });
}

/** A promise with its resolve function, to wait for a handler call or a worker event. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * Things a test opened, closed in afterEach: a test that fails by timing out never reaches
 * its own `finally`, and its handles would keep jest from exiting.
 */
export function closeAfterEach(): <T extends { close(): Promise<unknown> }>(closable: T) => T {
  const opened: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((c) => c.close()));
  });
  return (closable) => {
    opened.push(closable);
    return closable;
  };
}
