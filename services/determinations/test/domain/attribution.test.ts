import { attribute } from '../../src/ingestion/attribution';
import type { PolicyReference, PolicySnapshot } from '../../src/ingestion/policies';
import { assessment } from '../support';
import { policySnapshot } from './fixtures';

const POLICY: PolicySnapshot = policySnapshot();

/** The policy service as attribution sees it: one policy, found by id or by number. */
function lookupOf(policy: PolicySnapshot | null) {
  const asked: PolicyReference[] = [];
  const lookup = (ref: PolicyReference) => {
    asked.push(ref);
    if (!policy) return null;
    return ('policyId' in ref ? ref.policyId === policy.id : ref.policyNumber === policy.policyNumber)
      ? policy
      : null;
  };
  return Object.assign(lookup, { asked });
}

const input = (overrides: Record<string, unknown> = {}, evidence: Record<string, unknown> = {}) => {
  const base = assessment({ policyId: POLICY.id }, overrides);
  return {
    ...base,
    evidence: {
      ...base.evidence,
      periodStart: '2026-10-01T00:00:00Z',
      periodEnd: '2026-10-31T00:00:00Z',
      ...evidence,
    },
  } as Parameters<typeof attribute>[0];
};

describe('attribution of an assessment to a policy', () => {
  it('attributes to an ACTIVE or EXPIRED policy whose cover overlaps the observation period', async () => {
    for (const status of ['ACTIVE', 'EXPIRED'] as const) {
      const result = await attribute(input(), lookupOf({ ...POLICY, status }));
      expect(result).toEqual({ attributed: true, policy: { ...POLICY, status } });
    }
  });

  it('finds the policy by number when no id is given', async () => {
    const lookup = lookupOf(POLICY);
    const result = await attribute(input({ policyId: undefined, policyNumber: POLICY.policyNumber }), lookup);
    expect(result.attributed).toBe(true);
    expect(lookup.asked).toEqual([{ policyNumber: POLICY.policyNumber }]);
  });

  it.each([
    ['no such policy', null, {}, {}, 'POLICY_NOT_FOUND'],
    ['a PENDING policy', { ...POLICY, status: 'PENDING' }, {}, {}, 'POLICY_NOT_IN_FORCE'],
    ['a CANCELLED policy', { ...POLICY, status: 'CANCELLED' }, {}, {}, 'POLICY_NOT_IN_FORCE'],
    ['a livestock kind on a crop policy', POLICY, { kind: 'LIVESTOCK_MORTALITY_INDEX' }, {}, 'KIND_MISMATCH'],
    [
      'a period ending before the cover starts',
      POLICY,
      {},
      { periodStart: '2026-04-01T00:00:00Z', periodEnd: '2026-05-31T23:59:59Z' },
      'OUTSIDE_COVER',
    ],
    [
      'a period starting after the cover ends',
      POLICY,
      {},
      { periodStart: '2026-12-01T00:00:01Z', periodEnd: '2026-12-31T00:00:00Z' },
      'OUTSIDE_COVER',
    ],
    [
      'an id and a number of two different policies',
      POLICY,
      { policyNumber: 'POL-KE-2026-999999' },
      {},
      'POLICY_REFERENCE_MISMATCH',
    ],
  ])('leaves %s unattributed', async (_what, policy, overrides, evidence, reason) => {
    const result = await attribute(input(overrides, evidence), lookupOf(policy as PolicySnapshot | null));
    expect(result).toMatchObject({ attributed: false, reason });
  });

  it('counts a period touching the first or last instant of cover as overlapping', async () => {
    const atStart = await attribute(
      input({}, { periodStart: '2026-05-01T00:00:00Z', periodEnd: POLICY.coverStartsAt }),
      lookupOf(POLICY),
    );
    const atEnd = await attribute(
      input({}, { periodStart: POLICY.coverEndsAt, periodEnd: '2026-12-31T00:00:00Z' }),
      lookupOf(POLICY),
    );
    expect([atStart.attributed, atEnd.attributed]).toEqual([true, true]);
  });

  it('attributes livestock mortality assessments to livestock policies only', async () => {
    const livestock = { ...POLICY, productType: 'LIVESTOCK' as const };
    expect(
      (await attribute(input({ kind: 'LIVESTOCK_MORTALITY_INDEX' }), lookupOf(livestock))).attributed,
    ).toBe(true);
    expect(await attribute(input({ kind: 'CROP_DAMAGE' }), lookupOf(livestock))).toMatchObject({
      reason: 'KIND_MISMATCH',
    });
  });
});
