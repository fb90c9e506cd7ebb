import { type ApprovalRecord, type ApprovalStore, settledFields } from '../../src/approvals/store';

/**
 * The approvals' store in memory, behind the interface the MongoDB one implements: each
 * conditional write checks and changes in one synchronous step, as one MongoDB
 * `findOneAndUpdate` does, after yielding once so that concurrent callers interleave.
 */
export function memoryApprovalStore(): ApprovalStore & { all(): ApprovalRecord[] } {
  const rows = new Map<string, ApprovalRecord>();
  const yieldOnce = () => new Promise<void>((resolve) => setImmediate(resolve));
  const copy = (row: ApprovalRecord | undefined) => (row ? structuredClone(row) : undefined);
  return {
    all: () => [...rows.values()].map((row) => structuredClone(row)),
    insert: async (record) => {
      await yieldOnce();
      if (rows.has(record._id)) throw new Error(`duplicate approval ${record._id}`);
      rows.set(record._id, structuredClone(record));
    },
    get: async (id) => {
      await yieldOnce();
      return copy(rows.get(id));
    },
    claim: async (id, now, claim) => {
      await yieldOnce();
      const row = rows.get(id);
      if (!row) return undefined;
      const pending = row.status === 'PENDING' && row.expiresAt.getTime() > now.getTime();
      const lapsed =
        row.status === 'EXECUTING' && row.leaseUntil !== null && row.leaseUntil.getTime() <= now.getTime();
      if (!pending && !lapsed) return undefined;
      Object.assign(row, { status: 'EXECUTING' }, structuredClone(claim));
      return copy(row);
    },
    settle: async (id, claim, settlement) => {
      await yieldOnce();
      const row = rows.get(id);
      if (row?.status !== 'EXECUTING' || row.claim !== claim) return undefined;
      Object.assign(row, structuredClone(settledFields(settlement)));
      return copy(row);
    },
    reject: async (id, now, decision) => {
      await yieldOnce();
      const row = rows.get(id);
      if (row?.status !== 'PENDING' || row.expiresAt.getTime() <= now.getTime()) return undefined;
      Object.assign(row, { status: 'REJECTED' }, structuredClone(decision));
      return copy(row);
    },
    list: async (filter, page) => {
      await yieldOnce();
      const now = filter.now.getTime();
      const matches = [...rows.values()]
        .filter((row) => !filter.action || row.action === filter.action)
        .filter((row) => {
          if (!filter.status) return true;
          if (filter.status === 'EXPIRED') return row.status === 'PENDING' && row.expiresAt.getTime() <= now;
          if (filter.status === 'PENDING') return row.status === 'PENDING' && row.expiresAt.getTime() > now;
          return row.status === filter.status;
        })
        .sort((a, b) => b.requestedAt.getTime() - a.requestedAt.getTime() || (a._id < b._id ? 1 : -1));
      const start = (page.page - 1) * page.limit;
      return {
        items: matches.slice(start, start + page.limit).map((row) => structuredClone(row)),
        total: matches.length,
      };
    },
  };
}
