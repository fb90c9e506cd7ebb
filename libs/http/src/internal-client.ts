import { randomUUID } from 'node:crypto';
import { currentTrace, outbound } from '@parametric/tracing';
import type { z } from 'zod';
import { OPS_CAPABILITIES } from './capabilities';
import { AppError } from './errors';
import { signContext } from './internal-context';

/** Where a service's ops look-ups are and how they are signed. */
export interface InternalClientOptions {
  /** The service's base URL, e.g. `http://policy:3002`. */
  baseUrl: string;
  signingSecret: string;
  timeoutMs: number;
  /** The service's name, for messages: "the policy service did not answer". */
  service: string;
  /** What it serves, for messages: "Policies cannot be read right now". */
  resource: string;
}

/**
 * A GET of another service's ops route (`/ops/...`) with a signed ops context, the request's id
 * and trace: the one way services read each other's data. `404` (and `400`: an id that cannot
 * exist) is null. Anything else that is not a `data` matching `schema` — no answer within
 * `timeoutMs`, a 5xx, another shape — is `503 SERVICE_UNAVAILABLE`: callers refuse or retry, and
 * never take it for "none".
 */
export function internalGet<S extends z.ZodType>(
  options: InternalClientOptions,
  path: string,
  schema: S,
  what: string,
): Promise<z.output<S> | null> {
  return internalRequest(options, 'GET', path, undefined, schema, what);
}

/**
 * A POST of a look-up that changes nothing but takes more than a URL carries (many ids at once),
 * as `internalGet` does it. Its answer always exists (an empty list finds nothing), so every
 * refusal, `400` and `404` included, is `503 SERVICE_UNAVAILABLE` rather than "none".
 */
export async function internalPost<S extends z.ZodType>(
  options: InternalClientOptions,
  path: string,
  body: unknown,
  schema: S,
  what: string,
): Promise<z.output<S>> {
  const answer = await internalRequest(options, 'POST', path, body, schema, what);
  if (answer === null)
    throw unavailable(options, `the ${options.service} service refused the ${what} look-up`);
  return answer;
}

async function internalRequest<S extends z.ZodType>(
  options: InternalClientOptions,
  method: 'GET' | 'POST',
  path: string,
  body: unknown,
  schema: S,
  what: string,
): Promise<z.output<S> | null> {
  const requestId = currentTrace()?.reqId ?? randomUUID();
  let res: Response;
  try {
    res = await outbound(`${method} ${options.service} ${what}`, (traceparent) =>
      fetch(`${options.baseUrl}${path}`, {
        method,
        headers: {
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          'x-request-id': requestId,
          ...(traceparent ? { traceparent } : {}),
          // A service's own call: trusted by the signing secret, like the rest of the internal network.
          ...signContext(
            { role: 'SERVICE', capabilities: [...OPS_CAPABILITIES], requestId, issuedAt: Date.now() },
            options.signingSecret,
          ),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(options.timeoutMs),
      }),
    );
  } catch (err) {
    throw unavailable(options, `the ${options.service} service did not answer (${(err as Error).message})`);
  }
  if (res.status === 404 || res.status === 400) {
    await res.body?.cancel();
    return null;
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw unavailable(options, `the ${options.service} service answered ${res.status}`);
  }
  let answer: { data?: unknown } | undefined;
  try {
    answer = (await res.json()) as { data?: unknown };
  } catch (err) {
    throw unavailable(options, `the ${options.service} service's answer was cut (${(err as Error).message})`);
  }
  const parsed = schema.safeParse(answer?.data);
  if (!parsed.success) {
    throw unavailable(options, `the ${options.service} service answered an unexpected ${what} shape`);
  }
  return parsed.data;
}

function unavailable(options: InternalClientOptions, reason: string): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    `${options.resource} cannot be read right now, try again shortly: ${reason}`,
  );
}
