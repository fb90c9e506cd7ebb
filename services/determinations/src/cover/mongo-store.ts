import { isDuplicateKey, writeErrorsOf } from '@parametric/mongo';
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
    async findMany(policyIds) {
      const covers = await model
        .find({ _id: { $in: policyIds } })
        .lean<CoverDoc[]>()
        .exec();
      return new Map(covers.map((cover) => [cover._id, cover]));
    },
    async create(cover) {
      try {
        await model.create(cover);
        return true;
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    },
    async createMany(covers) {
      // The documents are whole (claimCoversOfPolicies builds them), so the driver writes them
      // as they are, in one unordered insert: a cover another claim created first is refused
      // alone (duplicate key) and the others are written.
      const created = new Set(covers.map((cover) => cover._id));
      try {
        await model.collection.insertMany(covers.map((cover) => ({ ...cover })) as never[], {
          ordered: false,
        });
      } catch (err) {
        const refused = writeErrorsOf(err);
        if (!refused || [...refused.values()].some((e) => !isDuplicateKey(e))) throw err;
        for (const index of refused.keys()) created.delete((covers[index] as CoverDoc)._id);
      }
      return created;
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
