import { type Command, Redis, type RedisOptions } from 'ioredis';

/** Checks per command timeout: a command fails after waiting `commandTimeoutMs`, at most a tenth more. */
const TICKS_PER_TIMEOUT = 10;

/**
 * An ioredis client whose commands fail with ioredis's own `Command timed out` once they have
 * waited `commandTimeoutMs` for Redis (at most a tenth longer), watched by one timer per client
 * instead of one per command.
 *
 * ioredis's `commandTimeout` arms a timer for every command and, when the answer comes, deletes
 * it from the command with `delete`, which leaves every command object in V8's dictionary mode:
 * on the gateway's hot path that cost about 2 µs of a request's 50 (docs/performance.md, "a
 * second machine: where the gateway's 19 µs go"; `npm run bench:redis` measures it). Here each
 * command sent is only noted, with the tick it was sent in, in a queue; while any is noted, a
 * timer ticks `TICKS_PER_TIMEOUT` times per timeout, fails the unanswered ones that have waited a
 * whole timeout, and forgets the answered ones. Redis answers
 * a connection's commands in order, so answered commands leave from the front of the queue as
 * new ones are sent, and the queue holds about one tick's commands. An idle client has no timer.
 *
 * A failed command stays where ioredis keeps it (its queue of commands awaiting an answer), as
 * with ioredis's own timeout, so a late answer still lands on it and the ones after it keep
 * their places.
 */
export class BoundedRedis extends Redis {
  /** The longest a command waits for Redis before it fails: the timeout and one tick. */
  readonly commandBoundMs: number;
  readonly #timeoutMs: number;
  readonly #tickMs: number;
  /** Commands sent and not yet forgotten, oldest first, from `#head` on; `#sentAt` is their tick. */
  #commands: (Command | undefined)[] = [];
  #sentAt: number[] = [];
  #head = 0;
  #tick = 0;
  #timer: NodeJS.Timeout | undefined;

  /** `url` as ioredis takes it; none when `options` say where Redis is (a duplicate). */
  constructor(url: string | undefined, options: RedisOptions & { commandTimeoutMs: number }) {
    // ioredis reads its arguments by type and skips an undefined one.
    super(url as string, withoutBound(options));
    const { commandTimeoutMs } = options;
    this.#timeoutMs = commandTimeoutMs;
    this.#tickMs = Math.max(1, Math.ceil(commandTimeoutMs / TICKS_PER_TIMEOUT));
    this.commandBoundMs = (TICKS_PER_TIMEOUT + 1) * this.#tickMs;
  }

  /** A client to the same Redis with the same options and the same bound (BullMQ duplicates clients). */
  override duplicate<Override extends Partial<RedisOptions> | undefined = undefined>(
    override?: Override,
  ): ReturnType<Redis['duplicate']> {
    return new BoundedRedis(undefined, { ...this.options, ...override, commandTimeoutMs: this.#timeoutMs });
  }

  override sendCommand(command: Command, stream?: Parameters<Redis['sendCommand']>[1]): unknown {
    // A command ioredis sends again (from its offline queue, on reconnect) keeps the time it
    // was first sent at: noted twice, the older note fails it, the newer finds it settled.
    this.#forgetAnswered();
    this.#commands.push(command);
    this.#sentAt.push(this.#tick);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#check(), this.#tickMs);
      // Never what keeps a process alive: a closed client's commands are failed by ioredis.
      this.#timer.unref();
    }
    return super.sendCommand(command, stream);
  }

  /** Drops answered commands from the front (answers come in order, so that is where they are). */
  #forgetAnswered(): void {
    const commands = this.#commands;
    while (this.#head < commands.length && (commands[this.#head] as Command).isSettled) {
      commands[this.#head] = undefined;
      this.#head++;
    }
    if (this.#head === commands.length) {
      commands.length = 0;
      this.#sentAt.length = 0;
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > commands.length) {
      commands.splice(0, this.#head);
      this.#sentAt.splice(0, this.#head);
      this.#head = 0;
    }
  }

  /**
   * One tick: a command noted during tick `t` has waited at least `TICKS_PER_TIMEOUT` ticks once
   * the tick counter passes `t + TICKS_PER_TIMEOUT`, so from then on it is failed if unanswered.
   */
  #check(): void {
    this.#tick++;
    const expired = this.#tick - TICKS_PER_TIMEOUT - 1;
    const commands = this.#commands;
    while (this.#head < commands.length && (this.#sentAt[this.#head] as number) <= expired) {
      const command = commands[this.#head] as Command;
      if (!command.isSettled) command.reject(new Error('Command timed out'));
      commands[this.#head] = undefined;
      this.#head++;
    }
    this.#forgetAnswered();
    if (this.#head === commands.length) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }
}

/** ioredis's options for a `BoundedRedis`: the bound is ours, so ioredis arms no timer per command. */
function withoutBound(
  options: RedisOptions & { commandTimeoutMs: number },
): RedisOptions & { replyMapping?: 'legacy' } {
  const { commandTimeoutMs, ...redisOptions } = options;
  if (!(commandTimeoutMs > 0)) throw new Error('BoundedRedis: commandTimeoutMs must be positive');
  if (redisOptions.commandTimeout !== undefined) {
    throw new Error(
      'BoundedRedis: give commandTimeoutMs, not ioredis commandTimeout (one timer per command)',
    );
  }
  return redisOptions as RedisOptions & { replyMapping?: 'legacy' };
}

/**
 * The longest a command of `redis` waits for Redis before it fails: a `BoundedRedis`'s bound,
 * else ioredis's own `commandTimeout`, else none (undefined).
 */
export function commandBoundOf(redis: Redis): number | undefined {
  if (redis instanceof BoundedRedis) return redis.commandBoundMs;
  const own = redis.options.commandTimeout;
  return own !== undefined && own > 0 ? own : undefined;
}
