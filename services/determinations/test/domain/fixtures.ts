import { randomUUID } from 'node:crypto';
import type { PolicySnapshot } from '../../src/ingestion/policies';

/** A policy as the policy service's look-up returns it: ACTIVE, Tier 1, 50,000.00 KES. */
export function policySnapshot(overrides: Partial<PolicySnapshot> = {}): PolicySnapshot {
  return {
    id: randomUUID(),
    organizationId: randomUUID(),
    policyNumber: 'KE-202611-A1B2C3',
    status: 'ACTIVE',
    productType: 'CROP',
    settlementMode: 'DETERMINATION',
    currency: 'KES',
    exponent: 2,
    sumInsuredMinor: '5000000',
    coverStartsAt: '2026-06-01T00:00:00.000Z',
    coverEndsAt: '2026-12-01T00:00:00.000Z',
    environment: 'live',
    ...overrides,
  };
}
