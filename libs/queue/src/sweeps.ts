import type { Producer } from './producer';
import type { Payload, QueueName } from './registry';
import { createWorker, type QueueWorker, type WorkerOptions } from './worker';

/** The queues whose jobs are periodic sweeps: a payload `{ task }` and nothing else. */
export type SweepQueue = {
  [N in QueueName]: Payload<N> extends { task: string }
    ? keyof Payload<N> extends 'task'
      ? N
      : never
    : never;
}[QueueName];

/** The tasks of a sweep queue (its payload's `task`). */
export type TaskOf<N extends SweepQueue> = Payload<N> extends { task: infer T extends string } ? T : never;

export interface Sweep {
  everyMs: number;
  run(): Promise<void>;
}

export interface SweepsOptions<N extends SweepQueue> extends Pick<WorkerOptions, 'connection' | 'prefix'> {
  producer: Producer<N>;
  /** Every task of the queue, how often it runs and what it does. */
  tasks: Record<TaskOf<N>, Sweep>;
  /** A failure to put the schedules back (Redis down): the next interval tries again. */
  onScheduleError(err: Error): void;
  onError(err: Error): void;
}

/**
 * A service's periodic sweeps: one BullMQ job scheduler per task (idempotent across replicas:
 * every replica may set it, one schedule results, so a tick runs once whichever replica takes
 * it), and the worker that runs each task as it comes due. The schedules live in Redis: one that
 * lost its data loses them too, and with them the sweeps that repair what it lost. So they are
 * put back every interval (an upsert of an unchanged schedule keeps its next run as it was).
 */
export async function startSweeps<N extends SweepQueue>(
  name: N,
  options: SweepsOptions<N>,
): Promise<QueueWorker<N>> {
  const tasks = Object.entries(options.tasks) as [TaskOf<N>, Sweep][];
  const scheduleAll = async () => {
    for (const [task, sweep] of tasks) {
      await options.producer.schedule(task, sweep.everyMs, { task } as Payload<N>);
    }
  };
  await scheduleAll();
  const keeper = setInterval(
    () => {
      scheduleAll().catch((err: Error) => options.onScheduleError(err));
    },
    Math.min(...tasks.map(([, sweep]) => sweep.everyMs)),
  );
  keeper.unref();
  const worker = createWorker(
    name,
    async (payload) => {
      const sweep = options.tasks[(payload as { task: TaskOf<N> }).task];
      await sweep.run();
    },
    { connection: options.connection, prefix: options.prefix, onError: options.onError },
  );
  return {
    worker: worker.worker,
    close: async () => {
      clearInterval(keeper);
      await worker.close();
    },
  };
}
