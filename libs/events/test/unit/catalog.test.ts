import { randomUUID } from 'node:crypto';
import { ZodError } from 'zod';
import {
  createEvent,
  EVENT_CATALOG,
  EVENT_NAMES,
  type EventName,
  eventEnvelopeSchema,
  exampleData,
} from '../../src';

const orgId = randomUUID();
const examples = exampleData(orgId);

describe('event catalog', () => {
  it('declares exactly the events of the spec', () => {
    expect([...EVENT_NAMES].sort()).toEqual(
      [
        'determination.delivered',
        'determination.settlement_report_overdue',
        'determination.settlement_report_recorded',
        'kyb.rejected',
        'kyb.verified',
        'payout.completed',
        'payout.failed',
        'policy.activated',
      ].sort(),
    );
  });

  it.each(EVENT_NAMES)('%s: accepts a valid example and wraps it in an envelope', (name) => {
    const data = examples[name];
    const event = createEvent(name as EventName, orgId, data as never);
    expect(event).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      event: name,
      createdAt: expect.any(String),
      organizationId: orgId,
      data,
    });
    expect(new Date(event.createdAt).toISOString()).toBe(event.createdAt);
    expect(eventEnvelopeSchema.parse(JSON.parse(JSON.stringify(event)))).toEqual(event);
  });

  it.each(EVENT_NAMES)('%s: rejects an unknown data field', (name) => {
    expect(() => EVENT_CATALOG[name].parse({ ...examples[name], surprise: true })).toThrow(ZodError);
  });

  it.each(EVENT_NAMES)('%s: rejects data with any of its fields missing', (name) => {
    for (const field of Object.keys(examples[name])) {
      const { [field]: _dropped, ...rest } = examples[name] as Record<string, unknown>;
      expect({ field, ok: EVENT_CATALOG[name].safeParse(rest).success }).toEqual({ field, ok: false });
    }
  });

  it('gives every event a fresh id', () => {
    const a = createEvent('kyb.verified', orgId, examples['kyb.verified']);
    const b = createEvent('kyb.verified', orgId, examples['kyb.verified']);
    expect(a.id).not.toBe(b.id);
  });

  it('rejects an event name outside the catalog, in createEvent and in the envelope schema', () => {
    // @ts-expect-error: not a catalog event
    expect(() => createEvent('policy.cancelled', orgId, { policyId: 'p1' })).toThrow(ZodError);
    const envelope = createEvent('kyb.verified', orgId, examples['kyb.verified']);
    expect(eventEnvelopeSchema.safeParse({ ...envelope, event: 'kyb.pending' }).success).toBe(false);
  });

  it('rejects a wrong data shape at compile time and at run time', () => {
    const wrongStatus = { organizationId: orgId, kybStatus: 'REJECTED' } as const;
    const sumAsText = { ...examples['policy.activated'], sumInsured: '1000' };
    // @ts-expect-error: kybStatus must be 'VERIFIED' for kyb.verified
    expect(() => createEvent('kyb.verified', orgId, wrongStatus)).toThrow(ZodError);
    // @ts-expect-error: sumInsured is a number
    expect(() => createEvent('policy.activated', orgId, sumAsText)).toThrow(ZodError);
    // @ts-expect-error: another event's data
    expect(() => createEvent('payout.failed', orgId, examples['payout.completed'])).toThrow(ZodError);
  });

  it('rejects an envelope whose data belongs to another event', () => {
    const envelope = createEvent('payout.completed', orgId, examples['payout.completed']);
    expect(eventEnvelopeSchema.safeParse({ ...envelope, event: 'payout.failed' }).success).toBe(false);
  });

  it('requires a uuid organizationId on the envelope', () => {
    expect(() => createEvent('kyb.verified', 'org-1', examples['kyb.verified'])).toThrow(ZodError);
  });

  describe('determination.delivered amountOwed', () => {
    const delivered = examples['determination.delivered'];

    it('accepts a null amount with its reason', () => {
      const data = {
        ...delivered,
        amountOwed: null,
        amountOwedUnavailableReason: 'CURRENCY_EXPONENT_UNREGISTERED',
      };
      expect(createEvent('determination.delivered', orgId, data).data).toEqual(data);
    });

    it('rejects a null amount without a reason, and a reason next to an amount', () => {
      expect(() => createEvent('determination.delivered', orgId, { ...delivered, amountOwed: null })).toThrow(
        ZodError,
      );
      expect(() =>
        createEvent('determination.delivered', orgId, {
          ...delivered,
          amountOwedUnavailableReason: 'CURRENCY_EXPONENT_UNREGISTERED',
        }),
      ).toThrow(ZodError);
    });

    it('rejects amounts that are not integer/decimal strings and out-of-range basis points', () => {
      const owed = delivered.amountOwed as NonNullable<typeof delivered.amountOwed>;
      for (const amountOwed of [
        { ...owed, amountMinor: '17500.00' },
        { ...owed, amount: '1.2e4' },
      ]) {
        expect(() => createEvent('determination.delivered', orgId, { ...delivered, amountOwed })).toThrow(
          ZodError,
        );
      }
      expect(() =>
        createEvent('determination.delivered', orgId, { ...delivered, damagePercentBp: 10001 }),
      ).toThrow(ZodError);
    });
  });

  it('determination.settlement_report_recorded: correction and supersedesReportId must agree', () => {
    const recorded = examples['determination.settlement_report_recorded'];
    const correction = {
      ...recorded,
      correction: true,
      report: { ...recorded.report, supersedesReportId: 'rep-1' },
    };
    expect(createEvent('determination.settlement_report_recorded', orgId, correction).data).toEqual(
      correction,
    );
    expect(() =>
      createEvent('determination.settlement_report_recorded', orgId, { ...recorded, correction: true }),
    ).toThrow(ZodError);
    expect(() =>
      createEvent('determination.settlement_report_recorded', orgId, { ...correction, correction: false }),
    ).toThrow(ZodError);
  });

  it('payout amounts are decimal strings, not numbers', () => {
    const completed = examples['payout.completed'];
    // @ts-expect-error: amounts are strings
    expect(() => createEvent('payout.completed', orgId, { ...completed, amountKES: 17500 })).toThrow(
      ZodError,
    );
  });
});
