import type { Redis } from 'ioredis';
import {
  closeOwned,
  QUEUE_COMMAND_TIMEOUT_MS,
  QUEUE_OPERATION_TIMEOUT_MS,
  type RedisConnection,
  resolveConnection,
  withDeadline,
} from './connection';

/**
 * Hands out send times one `interval` apart from a schedule shared in Redis: the slot is the
 * later of now and the last slot given plus the interval. Redis's own clock (TIME) decides "now",
 * so every process sharing the key agrees on it whatever their clocks say; the script runs
 * atomically, so no two callers get slots closer than the interval. A slot further away than
 * `bound` is not given (the schedule is left as it was), so a caller is never told to hold a job
 * longer than that. Times are microseconds, so an interval of 1000 / 30 ms does not round down
 * to 33 ms, a faster pace. The key expires once the schedule is idle.
 */
const TAKE_SLOT = `
-- Redis before 7 replicates scripts verbatim and refuses a write after TIME unless asked to
-- replicate the script's effects instead; from 7 on that is the only way, and this is a no-op.
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local bound = tonumber(ARGV[2])
local slot = now
local last = redis.call('GET', KEYS[1])
if last then
  local next = tonumber(last) + interval
  if next > slot then slot = next end
end
local wait = slot - now
if wait > bound then
  return {0, wait, slot}
end
redis.call('SET', KEYS[1], string.format('%d', slot), 'PX', math.ceil((wait + interval) / 1000) + 1000)
return {1, wait, slot}
`;

export interface PacerOptions {
  /** A URL, or an ioredis client (shared: the pacer only runs short commands on it). */
  connection: RedisConnection;
  /** The Redis key holding the schedule: every process pacing the same thing uses the same key. */
  key: string;
  /** How far apart slots are, in ms: at most `1000 / intervalMs` slots in any second. */
  intervalMs: number;
  /** The furthest ahead a slot is given, in ms. */
  boundMs: number;
}

/**
 * A slot: send after `waitMs`. Or none within the bound: the next would be `waitMs` away. `atUs`
 * is the slot's time on Redis's clock (microseconds since the epoch).
 */
export interface Slot {
  granted: boolean;
  waitMs: number;
  atUs: number;
}

export interface Pacer {
  /** Takes the next slot on the shared schedule, if it is within the bound. */
  take(): Promise<Slot>;
  close(): Promise<void>;
}

type PacingClient = Redis & {
  takePacedSlot(key: string, intervalUs: number, boundUs: number): Promise<[number, number, number]>;
};

/** One schedule of evenly spaced slots, shared by every process that uses `key` on this Redis. */
export function createPacer(options: PacerOptions): Pacer {
  if (!(options.intervalMs > 0)) throw new Error('createPacer: intervalMs must be positive');
  const connection = resolveConnection(options.connection, {
    maxRetriesPerRequest: 1,
    commandTimeoutMs: QUEUE_COMMAND_TIMEOUT_MS,
    connectionName: `${options.key}:pacer`,
  });
  const client = connection.client as PacingClient;
  if (typeof client.takePacedSlot !== 'function') {
    client.defineCommand('takePacedSlot', { numberOfKeys: 1, lua: TAKE_SLOT });
  }
  // Rounded up: a shorter interval would let more slots into one second than asked.
  const intervalUs = Math.ceil(options.intervalMs * 1000);
  const boundUs = Math.round(options.boundMs * 1000);
  return {
    async take() {
      const [granted, waitUs, atUs] = await withDeadline(
        client.takePacedSlot(options.key, intervalUs, boundUs),
        QUEUE_OPERATION_TIMEOUT_MS,
        `pacing ${options.key}`,
        QUEUE_COMMAND_TIMEOUT_MS,
      );
      return { granted: granted === 1, waitMs: waitUs / 1000, atUs };
    },
    close: () => closeOwned(connection),
  };
}
