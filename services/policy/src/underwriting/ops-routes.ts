import { opsGetUnderwriting, opsRecordCapacity, opsRecordLicence } from '@parametric/contracts';
import { type Binding, implement, ok } from '@parametric/http';
import type { OpsContext } from '../context';
import { recordCapacity, recordLicence, underwritingOf } from './domain';

/**
 * Underwriting setup (ops only; docs/ops.md). The `{id}` is the organization, so each action is
 * bound to it; the gateway has checked that the organization exists.
 */
export const underwritingOpsRoutes: Binding<OpsContext>[] = [
  implement(opsRecordLicence, async ({ params, body }, { repositories }) =>
    ok(await recordLicence(repositories.forOrganization(params.id), body)),
  ),
  implement(opsRecordCapacity, async ({ params, body }, { repositories }) =>
    ok(await recordCapacity(repositories.forOrganization(params.id), body)),
  ),
  implement(opsGetUnderwriting, async ({ params }, { repositories }) =>
    ok(await underwritingOf(repositories.forOrganization(params.id))),
  ),
];
