import type { Logger } from '@parametric/logger';
import type { Payload, Producer } from '@parametric/queue';
import { DelayedError, type Job } from 'bullmq';
import type { DeliveryDoc, DeliveryModel } from '../deliveries/model';
import type { EndpointModel } from '../endpoints/model';
import { decryptSecret } from '../endpoints/secret-box';
import type { Sender } from './send';
import { deliveryHeaders } from './sign';

export interface DelivererDeps {
  deliveries: DeliveryModel;
  endpoints: EndpointModel;
  sender: Sender;
  producer: Producer<'webhook-deliveries'>;
  logger: Logger;
  secretKey: string;
  backoffMs: number[];
  maxAttempts: number;
  perOrganizationConcurrency: number;
  now?: () => number;
}

type AttemptJob = Payload<'webhook-deliveries'>;

export function jobIdOf({ deliveryId, cycle, attempt }: AttemptJob): string {
  return `${deliveryId}_${cycle}_${attempt}`;
}

/** Wait before attempt `attempt + 1` after attempt `attempt` failed (30 s, 1 min, 2 min, 4 min…). */
export function backoffAfter(attempt: number, backoffMs: number[]): number {
  return backoffMs[Math.min(attempt, backoffMs.length) - 1] ?? 0;
}

/**
 * One delivery attempt. The row in MongoDB is the state; the job only says "attempt n of
 * cycle c is due". Every write is conditional on the row still being at attempt n-1 of
 * cycle c, so a duplicate or stale job (a manual retry started a new cycle; a crashed
 * worker's job ran twice) changes nothing: at-least-once sending, exactly-once counting.
 */
export function createDeliverer(deps: DelivererDeps) {
  const now = deps.now ?? Date.now;
  const inFlight = new Map<string, number>();

  async function schedule(job: AttemptJob, delay: number): Promise<void> {
    try {
      await deps.producer.add(job, { jobId: jobIdOf(job), delay });
    } catch (err) {
      // The row says when the attempt is due; the reconciler enqueues it once Redis is back.
      deps.logger.warn(
        { err, deliveryId: job.deliveryId },
        'could not schedule delivery attempt; reconciler will',
      );
    }
  }

  async function record(
    row: DeliveryDoc,
    job: AttemptJob,
    update: Record<string, unknown>,
  ): Promise<boolean> {
    const result = await deps.deliveries.updateOne(
      { _id: row._id, status: 'PENDING', cycle: job.cycle, attempts: job.attempt - 1 },
      { $set: update },
    );
    return result.modifiedCount === 1;
  }

  async function attempt(job: AttemptJob, bullJob?: Job, token?: string): Promise<void> {
    const row = await deps.deliveries.findById(job.deliveryId).lean<DeliveryDoc>();
    if (row?.status !== 'PENDING' || row.cycle !== job.cycle || row.attempts !== job.attempt - 1) return;

    // One slow or dead partner must not hold every slot: over its share, the job steps
    // aside (back to delayed, freeing this slot) instead of waiting here.
    const busy = inFlight.get(row.organizationId) ?? 0;
    if (bullJob && token && busy >= deps.perOrganizationConcurrency) {
      await bullJob.moveToDelayed(now() + 20 + Math.floor(Math.random() * 60), token);
      throw new DelayedError();
    }
    inFlight.set(row.organizationId, busy + 1);
    try {
      await send(row, job);
    } finally {
      const left = (inFlight.get(row.organizationId) ?? 1) - 1;
      if (left > 0) inFlight.set(row.organizationId, left);
      else inFlight.delete(row.organizationId);
    }
  }

  async function send(row: DeliveryDoc, job: AttemptJob): Promise<void> {
    const endpoint = await deps.endpoints.findById(row.organizationId).lean();
    const startedAt = now();
    let status: number | null = null;
    let error: string | null;
    let url: string | null = endpoint?.url ?? null;
    if (!endpoint) {
      error = 'No webhook URL configured';
    } else {
      const secret = decryptSecret(endpoint.secretSealed, deps.secretKey);
      const headers = deliveryHeaders({
        secret,
        body: row.body,
        event: row.event,
        deliveryId: row._id,
        now: startedAt,
      });
      const result = await deps.sender.post(endpoint.url, row.body, headers);
      status = result.status;
      error = result.error ?? (status !== null && (status < 200 || status > 299) ? `HTTP ${status}` : null);
      url = endpoint.url;
    }

    const finishedAt = new Date(now());
    if (!error) {
      await record(row, job, {
        status: 'DELIVERED',
        attempts: job.attempt,
        responseStatus: status,
        lastError: null,
        deliveredAt: finishedAt,
        nextAttemptAt: null,
        url,
      });
      return;
    }
    const exhausted = job.attempt >= deps.maxAttempts || !endpoint;
    const delay = backoffAfter(job.attempt, deps.backoffMs);
    const counted = await record(row, job, {
      status: exhausted ? 'FAILED' : 'PENDING',
      attempts: job.attempt,
      responseStatus: status,
      lastError: error,
      nextAttemptAt: exhausted ? null : new Date(finishedAt.getTime() + delay),
      url,
    });
    deps.logger.info(
      { deliveryId: row._id, attempt: job.attempt, status, error, exhausted },
      'delivery attempt failed',
    );
    if (counted && !exhausted) await schedule({ ...job, attempt: job.attempt + 1 }, delay);
  }

  return { attempt, schedule };
}

export type Deliverer = ReturnType<typeof createDeliverer>;
