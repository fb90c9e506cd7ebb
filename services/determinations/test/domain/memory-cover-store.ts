import type { CoverClaim, CoverDoc, CoverStore } from '../../src/cover/claim';

/**
 * Covers in memory, behind the same interface and with the same conditional writes as the
 * MongoDB store: for unit tests of the cap. Copies in and out, as a database would.
 */
export function memoryCoverStore(): CoverStore & { all(): CoverDoc[] } {
  const covers = new Map<string, CoverDoc>();
  return {
    all: () => [...covers.values()].map((c) => structuredClone(c)),
    async find(policyId) {
      const cover = covers.get(policyId);
      return cover ? structuredClone(cover) : null;
    },
    async findMany(policyIds) {
      const found = new Map<string, CoverDoc>();
      for (const id of policyIds) {
        const cover = covers.get(id);
        if (cover) found.set(id, structuredClone(cover));
      }
      return found;
    },
    async createMany(many) {
      const created = new Set<string>();
      for (const cover of many) {
        if (covers.has(cover._id)) continue;
        covers.set(cover._id, structuredClone(cover));
        created.add(cover._id);
      }
      return created;
    },
    async create(cover) {
      if (covers.has(cover._id)) return false;
      covers.set(cover._id, structuredClone(cover));
      return true;
    },
    async append(policyId: string, expectedSeq: number, owedMinor: string, claims: CoverClaim[]) {
      const cover = covers.get(policyId);
      if (!cover || cover.seq !== expectedSeq) return false;
      covers.set(policyId, {
        ...cover,
        owedMinor,
        seq: expectedSeq + 1,
        claims: [...cover.claims, ...structuredClone(claims)],
      });
      return true;
    },
  };
}
