import { opsDeterminationSchema } from '@parametric/contracts';
import { AppError, type InternalClientOptions, internalGet } from '@parametric/http';
import { z } from 'zod';

/** A determination of any organization, as the determinations service's ops look-up returns it. */
export type OpsDetermination = z.output<typeof opsDeterminationSchema>;

interface ClientDeps {
  determinationsUrl: string;
  signingSecret: string;
  timeoutMs: number;
}

/** Finds a determination of any organization; null when the determinations service knows none. */
export type DeterminationLookup = (determinationId: string) => Promise<OpsDetermination | null>;

/** Where a page of payable determinations starts: after the last one of the previous page. */
export interface PayableCursor {
  issuedAt: string;
  id: string;
}

/**
 * One page (oldest first) of the determinations that owe a Tier 2 payout, issued after `after`
 * and before `issuedBefore`.
 */
export type PayableDeterminations = (query: {
  after: PayableCursor | null;
  issuedBefore: Date;
  limit: number;
}) => Promise<OpsDetermination[]>;

const clientOf = (deps: ClientDeps): InternalClientOptions => ({
  baseUrl: deps.determinationsUrl,
  signingSecret: deps.signingSecret,
  timeoutMs: deps.timeoutMs,
  service: 'determinations',
  resource: 'Determinations',
});

/**
 * `GET /ops/determinations/{id}` of the determinations service, signed as an ops request
 * (`internalGet`): down, slow or nonsense is `503 SERVICE_UNAVAILABLE`, never "no such
 * determination".
 */
export function determinationLookup(deps: ClientDeps): DeterminationLookup {
  const client = clientOf(deps);
  return (id) =>
    internalGet(
      client,
      `/ops/determinations/${encodeURIComponent(id)}`,
      opsDeterminationSchema,
      'determination',
    );
}

const payablePage = z.array(opsDeterminationSchema);

/** `GET /ops/payable-determinations` of the determinations service (the payout origination sweep's source). */
export function payableDeterminations(deps: ClientDeps): PayableDeterminations {
  const client = clientOf(deps);
  return async ({ after, issuedBefore, limit }) => {
    const query = new URLSearchParams({ issuedBefore: issuedBefore.toISOString(), limit: String(limit) });
    if (after) {
      query.set('issuedFrom', after.issuedAt);
      query.set('afterId', after.id);
    }
    const page = await internalGet(
      client,
      `/ops/payable-determinations?${query}`,
      payablePage,
      'determination',
    );
    // A 400 or 404 of a list is not "none": the route exists and takes these parameters.
    if (page === null) {
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        'Determinations cannot be read right now, try again shortly: the payable list was refused',
      );
    }
    return page;
  };
}
