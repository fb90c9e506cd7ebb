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
