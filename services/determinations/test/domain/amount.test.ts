import fc from 'fast-check';
import { owedFigure } from '../../src/determinations/amount';
import { policySnapshot } from './fixtures';

const policy = policySnapshot;

/** The reference: the decimal string of floor(sum × bp / 10000), computed digit by digit. */
function reference(sumMinor: bigint, bp: number, exponent: number): { minor: string; amount: string } {
  const minor = (sumMinor * BigInt(bp)) / 10_000n;
  const digits = minor.toString().padStart(exponent + 1, '0');
  const amount = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return { minor: minor.toString(), amount };
}

describe('amountOwed = sumInsured × damagePercentBp / 10000, truncated to the minor unit', () => {
  it('is exact for a KES policy, with the formula in words', () => {
    const figure = owedFigure(policy({ sumInsuredMinor: '5000000' }), 2_500);
    expect(figure.amountOwed).toEqual({
      amountMinor: '1250000',
      amount: '12500.00',
      currency: 'KES',
      exponent: 2,
      damagePercentBp: 2_500,
      basis:
        'sumInsured 50000.00 KES × 2500 bp / 10000 = 12500.00 KES, truncated toward zero to the minor unit (0.01 KES)',
    });
    expect(figure.amountOwedUnavailableReason).toBeUndefined();
  });

  it('truncates toward zero, never rounds up', () => {
    // 333.33 KES × 33.33% = 111.098889 KES → 111.09, not 111.10.
    const figure = owedFigure(policy({ sumInsuredMinor: '33333' }), 3_333);
    expect(figure.amountOwed?.amountMinor).toBe('11109');
    expect(figure.amountOwed?.amount).toBe('111.09');
  });

  it('works in currencies without minor units (UGX, RWF, XOF: exponent 0)', () => {
    for (const currency of ['UGX', 'RWF', 'XOF']) {
      const figure = owedFigure(policy({ currency, exponent: 0, sumInsuredMinor: '1000001' }), 9_999);
      expect(figure.amountOwed).toMatchObject({
        amountMinor: '999900',
        amount: '999900',
        exponent: 0,
        currency,
      });
      expect(figure.amountOwed?.basis).toContain(`(1 ${currency})`);
    }
  });

  it('is exact for sums near and beyond 2^53 minor units', () => {
    const sum = 2n ** 53n + 1n; // 9007199254740993: a float cannot hold it
    const figure = owedFigure(policy({ sumInsuredMinor: sum.toString() }), 10_000);
    expect(figure.amountOwed?.amountMinor).toBe('9007199254740993');
    expect(figure.amountOwed?.amount).toBe('90071992547409.93');
  });

  it('matches the BigInt reference for any sum, damage and registered exponent', () => {
    const currencies = [
      ['KES', 2],
      ['GHS', 2],
      ['UGX', 0],
      ['RWF', 0],
      ['XOF', 0],
      ['TZS', 2],
      ['NGN', 2],
    ] as const;
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.constantFrom(...currencies),
        (sum, bp, [currency, exponent]) => {
          const figure = owedFigure(policy({ currency, exponent, sumInsuredMinor: sum.toString() }), bp);
          const expected = reference(sum, bp, exponent);
          expect(figure.amountOwed?.amountMinor).toBe(expected.minor);
          expect(figure.amountOwed?.amount).toBe(expected.amount);
          expect(figure.owedMinor).toBe(BigInt(expected.minor));
          expect(BigInt(expected.minor) * 10_000n <= sum * BigInt(bp)).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('is null with CURRENCY_EXPONENT_UNREGISTERED for a currency the registry does not know', () => {
    const figure = owedFigure(policy({ currency: 'ZMW', exponent: 2 }), 5_000);
    expect(figure).toEqual({
      amountOwed: null,
      amountOwedUnavailableReason: 'CURRENCY_EXPONENT_UNREGISTERED',
      owedMinor: null,
    });
  });

  it('is null in Tier 2 (settled by the service), but keeps the figure for the payout', () => {
    const figure = owedFigure(policy({ settlementMode: 'DETERMINATION_AND_SETTLEMENT' }), 2_500);
    expect(figure.amountOwed).toBeNull();
    expect(figure.amountOwedUnavailableReason).toBe('SETTLED_BY_SERVICE');
    expect(figure.owedMinor).toBe(1_250_000n);
  });

  it('refuses a policy whose stored exponent disagrees with the registry instead of scaling by 10^n', () => {
    expect(() => owedFigure(policy({ currency: 'KES', exponent: 0 }), 2_500)).toThrow(/exponent/);
  });

  describe('capped by the remaining cover (claimCover’s answer)', () => {
    const full = policy({ sumInsuredMinor: '2000000' }); // 20,000.00 KES

    it('owes the remaining cover and says so in the basis', () => {
      const figure = owedFigure(full, 10_000, {
        amountMinor: 500_000n,
        uncappedMinor: 2_000_000n,
        remainingBeforeMinor: 500_000n,
        capped: true,
      });
      expect(figure.owedMinor).toBe(500_000n);
      expect(figure.amountOwed).toEqual({
        amountMinor: '500000',
        amount: '5000.00',
        currency: 'KES',
        exponent: 2,
        damagePercentBp: 10_000,
        basis:
          'sumInsured 20000.00 KES × 10000 bp / 10000 = 20000.00 KES, truncated toward zero to the minor unit (0.01 KES); capped at the remaining cover of 5000.00 KES (sum insured 20000.00 KES less 15000.00 KES owed by earlier determinations of this policy)',
      });
    });

    it('owes "0" ("0.00") on exhausted cover', () => {
      const figure = owedFigure(full, 10_000, {
        amountMinor: 0n,
        uncappedMinor: 2_000_000n,
        remainingBeforeMinor: 0n,
        capped: true,
      });
      expect(figure.amountOwed).toMatchObject({ amountMinor: '0', amount: '0.00' });
      expect(figure.amountOwed?.basis).toContain(
        'capped at the remaining cover of 0.00 KES (sum insured 20000.00 KES less 20000.00 KES owed by earlier determinations of this policy)',
      );
    });

    it('keeps the basis of an uncapped determination word for word', () => {
      const taken = {
        amountMinor: 500_000n,
        uncappedMinor: 500_000n,
        remainingBeforeMinor: 700_000n,
        capped: false,
      };
      expect(owedFigure(full, 2_500, taken)).toEqual(owedFigure(full, 2_500));
    });

    it('gives a Tier 2 determination its capped figure for the payout, still currency-neutral', () => {
      const tier2 = policy({ sumInsuredMinor: '2000000', settlementMode: 'DETERMINATION_AND_SETTLEMENT' });
      const figure = owedFigure(tier2, 10_000, {
        amountMinor: 0n,
        uncappedMinor: 2_000_000n,
        remainingBeforeMinor: 0n,
        capped: true,
      });
      expect(figure).toEqual({
        amountOwed: null,
        amountOwedUnavailableReason: 'SETTLED_BY_SERVICE',
        owedMinor: 0n,
      });
    });

    it('refuses a cover answer that does not belong to this figure', () => {
      const wrong = {
        amountMinor: 900_000n,
        uncappedMinor: 900_000n,
        remainingBeforeMinor: 900_000n,
        capped: false,
      };
      expect(() => owedFigure(full, 2_500, wrong)).toThrow(/the formula says 500000/);
    });
  });
});
