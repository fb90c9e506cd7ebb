/** One day, for cover periods and days remaining (UTC days: no calendar or DST arithmetic). */
export const DAY_MS = 86_400_000;

/** Where time comes from: the system clock in service code, a fixed or moving one in tests. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
