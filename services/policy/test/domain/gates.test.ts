import { AppError } from '@parametric/http';
import type { FarmerDoc } from '../../src/farmers/model';
import type { HerdDoc } from '../../src/herds/model';
import {
  type OrganizationSnapshot,
  requireCapacityCurrency,
  requireCurrentLicence,
  requireFarmersHerd,
  requireFarmersPlot,
  requireInsurableFarmer,
  requireKybVerified,
  requireLiveCapacity,
} from '../../src/policies/gates';
import type { CapacityDoc, LicenceDoc } from '../../src/underwriting/model';

// Each purchase gate on its own, on what `readGates` read: the rule at its edges (an instant
// equal to "now" is already past). Their order in a purchase is test/domain-mongo/purchase.test.ts
// and, through the gateway, test/purchase.test.ts.

const NOW = new Date('2026-11-22T10:00:00.000Z');
const ms = (delta: number) => new Date(NOW.getTime() + delta);

/** What the gate threw, as the error handler would render it; `passed` when it threw nothing. */
function refusal(gate: () => unknown) {
  try {
    gate();
    return 'passed';
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { status: err.status, code: err.code, message: err.message, details: err.details };
  }
}

const org = (kybStatus: string): OrganizationSnapshot =>
  ({ countryCode: 'KE', kybStatus, serviceTier: 'DETERMINATION', isActive: true }) as OrganizationSnapshot;
const licence = (expiresAt: Date | null) =>
  ({ organizationId: 'o', market: 'KE', licenceNumber: 'IRA-1', expiresAt }) as LicenceDoc;
const capacity = (solvencyAttestedUntil: Date, currency = 'KES') =>
  ({ _id: 'o', currency, amountMinor: 100n, reservedMinor: 0n, solvencyAttestedUntil }) as CapacityDoc;
const farmer = (kycStatus: string) => ({ _id: 'f', kycStatus }) as FarmerDoc;

describe('KYB', () => {
  it('lets a VERIFIED organization sell, and no other', () => {
    expect(refusal(() => requireKybVerified(org('VERIFIED')))).toBe('passed');
    for (const status of ['PENDING', 'REJECTED']) {
      expect(refusal(() => requireKybVerified(org(status)))).toEqual({
        status: 403,
        code: 'FORBIDDEN',
        message: `Your organization's KYB is ${status}: policies can be sold once it is VERIFIED; complete KYB verification with us`,
        details: undefined,
      });
    }
  });
});

describe('the regulator licence of the market', () => {
  it('is required: none on file is 403 REGULATOR_LICENSE_REQUIRED naming the market', () => {
    expect(refusal(() => requireCurrentLicence(null, 'KE', NOW))).toEqual({
      status: 403,
      code: 'REGULATOR_LICENSE_REQUIRED',
      message:
        'No regulator licence for market KE is on file: send us your current KE licence (number and expiry date) before selling policies',
      details: undefined,
    });
  });

  it('must not have lapsed: expiring now or before, or with no recorded expiry, is 403 REGULATOR_LICENSE_EXPIRED', () => {
    for (const expiresAt of [null, ms(-1), NOW]) {
      expect(refusal(() => requireCurrentLicence(licence(expiresAt), 'KE', NOW))).toMatchObject({
        status: 403,
        code: 'REGULATOR_LICENSE_EXPIRED',
        message:
          'The regulator licence for market KE has lapsed or has no recorded expiry: send us your renewed licence with its expiry date',
      });
    }
    expect(refusal(() => requireCurrentLicence(licence(ms(1)), 'KE', NOW))).toBe('passed');
  });
});

describe('underwriting capacity', () => {
  it('must be recorded: none is 400', () => {
    expect(refusal(() => requireLiveCapacity(null, NOW))).toEqual({
      status: 400,
      code: 'INVALID_INPUT',
      message:
        'No underwriting capacity is recorded for your organization: send us your capacity (amount and currency) with a solvency attestation before selling policies',
      details: undefined,
    });
  });

  it('needs a solvency attestation that holds after now', () => {
    for (const until of [ms(-1), NOW]) {
      expect(refusal(() => requireLiveCapacity(capacity(until), NOW))).toMatchObject({
        status: 400,
        code: 'INVALID_INPUT',
        message:
          'Your solvency attestation has lapsed: no policies can be sold until you send us a renewed one',
      });
    }
    const live = capacity(ms(1));
    expect(requireLiveCapacity(live, NOW)).toBe(live);
  });

  it('must be in the currency the market sells in', () => {
    expect(requireCapacityCurrency(capacity(ms(1)), 'KES')).toBe('KES');
    expect(refusal(() => requireCapacityCurrency(capacity(ms(1), 'USD'), 'KES'))).toMatchObject({
      status: 400,
      code: 'INVALID_INPUT',
      message: 'Underwriting capacity is recorded in USD, policies in this market are sold in KES',
    });
    expect(refusal(() => requireCapacityCurrency(capacity(ms(1)), undefined))).toMatchObject({
      status: 400,
      code: 'INVALID_INPUT',
    });
  });
});

describe('the farmer', () => {
  it("must be the organization's: none found is 404", () => {
    expect(refusal(() => requireInsurableFarmer(null))).toEqual({
      status: 404,
      code: 'NOT_FOUND',
      message: 'Farmer not found',
      details: undefined,
    });
  });

  it('must be KYC-approved: 400 on farmerId saying the status', () => {
    for (const status of ['PENDING', 'REJECTED']) {
      expect(refusal(() => requireInsurableFarmer(farmer(status)))).toEqual({
        status: 400,
        code: 'INVALID_INPUT',
        message: `The farmer's KYC is ${status}: the farmer can be insured once it is APPROVED; have the farmer's KYC approved`,
        details: [{ field: 'farmerId', message: `farmer KYC is ${status}` }],
      });
    }
    const approved = farmer('APPROVED');
    expect(requireInsurableFarmer(approved)).toBe(approved);
  });
});

describe("the farmer's plot or herd", () => {
  it('a crop purchase needs a plot of this farmer: 404 otherwise', () => {
    expect(refusal(() => requireFarmersPlot(true))).toBe('passed');
    for (const found of [false, null]) {
      expect(refusal(() => requireFarmersPlot(found))).toMatchObject({
        status: 404,
        message: 'Plot not found',
      });
    }
  });

  it('a livestock purchase needs a herd of this farmer: 404 otherwise', () => {
    const herd = { _id: 'h', farmerId: 'f', estimatedValue: 10_000 } as unknown as HerdDoc;
    expect(requireFarmersHerd(herd)).toBe(herd);
    for (const found of [null, true, false]) {
      expect(refusal(() => requireFarmersHerd(found))).toMatchObject({
        status: 404,
        message: 'Herd not found',
      });
    }
  });
});
