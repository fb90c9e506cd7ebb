import { opsListAudit } from '@parametric/contracts';
import { type Binding, implement, page } from '@parametric/http';
import type { AuditModel } from './model';
import { listAudit } from './trail';

/** `GET /ops/audit`: the only route on the trail; nothing edits or deletes an entry. */
export const auditRoutes: Binding<{ audit: AuditModel }>[] = [
  implement(opsListAudit, async ({ query }, { audit }) => {
    const { items, total } = await listAudit(audit, query);
    return page(items, { page: query.page, limit: query.limit, total });
  }),
];
