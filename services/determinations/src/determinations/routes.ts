import {
  createSandboxDetermination,
  getDetermination,
  getDeterminationEvidence,
  getSettlementReports,
  listDeterminations as listDeterminationsRoute,
  recordSettlementReport as recordSettlementReportRoute,
} from '@parametric/contracts';
import { type Binding, created, implement, ok, page } from '@parametric/http';
import type { PartnerContext } from '../context';
import { recordSettlementReport, reportView, settlementReportsOf } from '../reports/domain';
import { reportStoreOf } from '../reports/store';
import { listDeterminations, readDetermination, readEvidence } from './reads';
import { determinationView } from './views';

/** Partner routes: reads of the organization's determinations and its Tier 1 settlement reports. */
export function determinationRoutes(
  /** Once per report made current (counted by the domain, not here: a replay is not counted). */
  onReportMade?: () => void,
): Binding<PartnerContext>[] {
  return [
    implement(listDeterminationsRoute, async ({ query }, { tenant }) => {
      const { items, total } = await listDeterminations(tenant, query);
      return page(items, { page: query.page, limit: query.limit, total });
    }),
    implement(getDetermination, async ({ params }, { tenant }) =>
      ok(await readDetermination(tenant, params.id)),
    ),
    implement(getDeterminationEvidence, async ({ params }, { tenant }) =>
      ok(await readEvidence(tenant, params.id)),
    ),
    implement(createSandboxDetermination, async ({ body }, { issueSandboxDetermination }) =>
      created(determinationView(await issueSandboxDetermination(body))),
    ),
    implement(getSettlementReports, async ({ params }, { tenant }) =>
      ok(await settlementReportsOf(reportStoreOf(tenant), params.id)),
    ),
    implement(recordSettlementReportRoute, async ({ params, body }, { tenant, now }) => {
      const { replayed, report, determination } = await recordSettlementReport(
        reportStoreOf(tenant),
        params.id,
        body,
        now(),
        onReportMade,
      );
      const view = {
        replayed,
        report: reportView(report),
        determinationId: determination._id,
        partnerSettlementStatus: 'REPORTED' as const,
        verifiedByMicrocrop: false as const,
        verificationStatus: 'UNVERIFIED' as const,
      };
      return replayed ? ok(view) : created(view);
    }),
  ];
}
