import {
  type KeptOutboxEntry,
  type OutboxRelay,
  type RelayLogger,
  signalOutboxWrites,
  startDocumentRelay,
} from '@parametric/events';
import { currentCarrier, type TraceCarrier } from '@parametric/tracing';
import { type Collection, Schema } from 'mongoose';
import { z } from 'zod';
import type { AddOptions, BulkJob, Producer } from './producer';
import { type Payload, QUEUES, type QueueName } from './registry';
import { validatePayload } from './validate';

// The events outbox (libs/events) for jobs addressed to other services: a job is stored in the
// document whose change causes it, by the same single-document update, and relayed to its queue
// at least once under its job id. A state change and the job it causes cannot be separated.

/** One stored job: `id` is the BullMQ job id, so a re-sent job collapses into the first. */
export interface JobOutboxEntry<N extends QueueName = QueueName> {
  id: string;
  queue: N;
  payload: Payload<N>;
  /** The trace of the request or job that stored it, so the job continues that trace. */
  trace?: TraceCarrier;
}

export interface JobOutboxFields {
  jobOutbox: JobOutboxEntry[];
  jobOutboxPending: boolean;
  jobOutboxRejected?: unknown[];
  /** Jobs already relayed, kept for the retention window (written by the relay only). */
  jobOutboxRelayed?: KeptOutboxEntry<JobOutboxEntry>[];
  /** The latest `relayedAt` among them. */
  jobOutboxRelayedAt?: Date;
}

const storedEntry = z.strictObject({
  id: z.string().min(1).max(200),
  queue: z.enum(Object.keys(QUEUES) as [QueueName, ...QueueName[]]),
  payload: z.unknown(),
  trace: z
    .strictObject({ traceparent: z.string().max(64), requestId: z.string().max(64).optional() })
    .optional(),
});

/** Adds the job outbox to a service's schema (call before compiling the model). */
export function withJobOutbox<S extends Schema>(schema: S): S {
  schema.add({
    jobOutbox: {
      type: [
        new Schema(
          { id: String, queue: String, payload: Schema.Types.Mixed, trace: Schema.Types.Mixed },
          { _id: false, id: false },
        ),
      ],
      default: [],
    },
    jobOutboxPending: { type: Boolean, default: false },
    jobOutboxRejected: { type: [Schema.Types.Mixed], default: undefined },
    // Written by the relay only: copies of relayed jobs, re-sent if Redis loses its data.
    jobOutboxRelayed: { type: [Schema.Types.Mixed], default: undefined },
    jobOutboxRelayedAt: { type: Date, default: undefined },
  });
  // Serves the relay's `find({ jobOutboxPending: true })`; partial, so it holds only the few
  // documents with jobs still to send.
  schema.index({ jobOutboxPending: 1 }, { partialFilterExpression: { jobOutboxPending: true } });
  // Serves the relay's re-send pass after Redis lost its data, `find({ jobOutboxRelayedAt:
  // { $gte: now - window } })`: a range over the last window only. Partial: documents that never
  // had a job are not in it.
  schema.index(
    { jobOutboxRelayedAt: 1 },
    { partialFilterExpression: { jobOutboxRelayedAt: { $exists: true } } },
  );
  // Each write that records a job wakes this process's job relay at once (libs/events signal.ts).
  return signalOutboxWrites(schema, 'jobOutboxPending');
}

/** A job to store with a change; validated now, so a bad payload fails the write, not the relay. */
export function outboxJob<N extends QueueName>(
  queue: N,
  payload: Payload<N>,
  jobId: string,
): JobOutboxEntry<N> {
  const trace = currentCarrier();
  const entry: JobOutboxEntry<N> = { id: jobId, queue, payload: validatePayload(queue, payload) };
  if (trace) entry.trace = trace;
  return entry;
}

/** Fields for a document created together with its jobs. */
export function jobOutboxInsert(
  ...jobs: JobOutboxEntry[]
): Pick<JobOutboxFields, 'jobOutbox' | 'jobOutboxPending'> {
  return { jobOutbox: jobs, jobOutboxPending: jobs.length > 0 };
}

/** Adds jobs to an update document (which may already record events with `withOutboxEvents`). */
export function withOutboxJobs<U extends Record<string, unknown>>(update: U, ...jobs: JobOutboxEntry[]): U {
  if (jobs.length === 0) return update;
  const set = { ...(update.$set as Record<string, unknown> | undefined), jobOutboxPending: true };
  const push = {
    ...(update.$push as Record<string, unknown> | undefined),
    jobOutbox: { $each: jobs },
  };
  return { ...update, $set: set, $push: push };
}

export interface JobOutboxRelayOptions {
  model: { readonly collection: Collection; readonly modelName: string };
  /** A producer for every queue the documents address; a job for another queue is kept pending. */
  producers: { [N in QueueName]?: Producer<N> };
  intervalMs?: number;
  enqueueTimeoutMs?: number;
  /** How long relayed jobs are kept to be re-sent if Redis loses its data (`OUTBOX_RETENTION_MS`). */
  retentionMs?: number;
  now?: () => number;
  logger?: RelayLogger;
}

/** Relays stored jobs to their queues, at least once, under their own job ids. */
export function startJobOutboxRelay(options: JobOutboxRelayOptions): OutboxRelay {
  const { producers, ...rest } = options;
  const swaps = Object.values(producers).flatMap((p) => (p ? [p.swapRelayMarker.bind(p)] : []));
  return startDocumentRelay({
    ...rest,
    spec: {
      arrayField: 'jobOutbox',
      pendingField: 'jobOutboxPending',
      rejectedField: 'jobOutboxRejected',
      keptField: 'jobOutboxRelayed',
      keptAtField: 'jobOutboxRelayedAt',
      entryName: 'job',
      // Each queue's producer has its own connection (and the queues could live on different
      // Redis servers): the marker is swapped through every one of them, in parallel.
      swapMarker: (key, value, ttlMs) => Promise.all(swaps.map((swap) => swap(key, value, ttlMs))),
      parse(entry) {
        const stored = storedEntry.safeParse(entry);
        if (!stored.success) return { ok: false, issues: stored.error.issues };
        const { id, queue, trace } = stored.data;
        const payload = QUEUES[queue].safeParse(stored.data.payload);
        if (!payload.success) return { ok: false, issues: payload.error.issues };
        // The stored trace, or none: the relay may run inside an unrelated request's context.
        const opts: AddOptions = { jobId: id, trace: trace ?? null };
        return { ok: true, id, job: { queue, payload: payload.data, opts } };
      },
      // One `addBulk` per queue, in parallel; a job for a queue without a producer fails the
      // pass, so it stays pending.
      async send(jobs) {
        const byQueue = new Map<QueueName, BulkJob<QueueName>[]>();
        for (const { queue, payload, opts } of jobs) {
          const group = byQueue.get(queue) ?? [];
          group.push({ payload: payload as never, opts });
          byQueue.set(queue, group);
        }
        await Promise.all(
          [...byQueue].map(([queue, group]) => {
            const producer = producers[queue] as Producer<QueueName> | undefined;
            if (!producer) throw new Error(`no producer for queue "${queue}"`);
            return producer.addBulk(group);
          }),
        );
      },
    },
  });
}
