import { z } from 'zod';
import { InvalidPayloadError, type Payload, QUEUES, type QueueName } from './registry';

/** The payload as its queue's schema parses it, or an InvalidPayloadError. */
export function validatePayload<N extends QueueName>(queue: N, payload: unknown): Payload<N> {
  const result = QUEUES[queue].safeParse(payload);
  if (!result.success)
    throw new InvalidPayloadError(queue, result.error.issues, z.prettifyError(result.error));
  return result.data as Payload<N>;
}
