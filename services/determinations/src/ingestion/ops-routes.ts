import {
  opsGetDetermination,
  opsIngestDetermination,
  opsIngestDeterminationBatch,
  opsListDeterminations,
  opsListPayableDeterminations,
  returnPreference,
} from '@parametric/contracts';
import { type Binding, created, implement, ok, page } from '@parametric/http';
import type { OpsContext } from '../context';
import {
  listAllDeterminations,
  listPayableDeterminations,
  readAnyDetermination,
} from '../determinations/reads';
import { opsDeterminationView, opsIngestionView } from '../determinations/views';
import { ingestBatch, ingestDetermination } from './domain';

/** Ops routes (reached through the gateway's ops API, docs/ops.md): ingestion and reads. */
export const ingestionOpsRoutes: Binding<OpsContext>[] = [
  implement(opsIngestDetermination, async ({ body }, ctx) => {
    const { replayed, determination } = await ingestDetermination(body, ctx.ingest);
    const view = { replayed, determination: opsDeterminationView(determination) };
    return replayed ? ok(view) : created(view);
  }),
  implement(opsIngestDeterminationBatch, async ({ body, headers }, ctx) => {
    const results = await ingestBatch(body.items, ctx.ingest, { onUnexpected: ctx.onUnexpected });
    const created = results.filter((r) => r.status === 201).length;
    const replayed = results.filter((r) => r.status === 200).length;
    const minimal = returnPreference(headers.Prefer) === 'minimal';
    const view = minimal ? opsIngestionView : opsDeterminationView;
    const reply = ok({
      results: results.map(({ determination, ...rest }) =>
        determination ? { ...rest, determination: view(determination) } : rest,
      ),
      summary: { created, replayed, failed: results.length - created - replayed },
    });
    return minimal ? { ...reply, headers: { 'Preference-Applied': 'return=minimal' } } : reply;
  }),
  implement(opsListDeterminations, async ({ query }, { data }) => {
    const { items, total } = await listAllDeterminations(data, query);
    return page(items, { page: query.page, limit: query.limit, total });
  }),
  implement(opsListPayableDeterminations, async ({ query }, { data }) =>
    ok(await listPayableDeterminations(data, query)),
  ),
  implement(opsGetDetermination, async ({ params }, { data }) =>
    ok(await readAnyDetermination(data, params.id)),
  ),
];
