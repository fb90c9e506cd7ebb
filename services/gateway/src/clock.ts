/** Where time comes from: the system clock in service code, a fixed or moving one in tests. */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
