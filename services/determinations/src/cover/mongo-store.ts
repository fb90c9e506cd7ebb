import { isDuplicateKey } from '@parametric/mongo';
import type { CoverClaim, CoverDoc, CoverStore } from './claim';
import type { CoverModel } from './model';

/**
 * Covers in MongoDB (`policy_covers`). Ingestion works across organizations (it finds the
 * organization through the policy); `claimCover` checks the stored organization against the
 * policy's on every claim.
 */
export function mongoCoverStore(model: CoverModel): CoverStore {
  return {
    find: (policyId) => model.findById(policyId).lean<CoverDoc>().exec(),
    async create(cover) {
      try {
        await model.create(cover);
        return true;
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    },
    async append(policyId: string, expectedSeq: number, owedMinor: string, claims: CoverClaim[]) {
      const result = await model.updateOne(
        { _id: policyId, seq: expectedSeq },
        { $set: { owedMinor, seq: expectedSeq + 1 }, $push: { claims: { $each: claims } } },
      );
      return result.matchedCount === 1;
    },
  };
}
