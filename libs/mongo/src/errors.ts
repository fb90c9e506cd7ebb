/** MongoDB's duplicate-key error (11000), with the fields of the unique index that refused the write. */
export function duplicateKeyFields(err: unknown): string[] | undefined {
  const e = err as { code?: number; keyPattern?: Record<string, unknown> } | null;
  if (e?.code !== 11000) return undefined;
  return Object.keys(e.keyPattern ?? {});
}

export function isDuplicateKey(err: unknown): boolean {
  return duplicateKeyFields(err) !== undefined;
}

/** One document's refusal in an unordered bulk write: the index of the refused operation. */
export interface WriteError {
  index: number;
  code?: number;
}

/**
 * The per-document refusals of an unordered `insertMany`/`bulkWrite` (the driver gives one or a
 * list), by the index of the refused operation; undefined for any other error, where nothing
 * says which documents were written.
 */
export function writeErrorsOf(err: unknown): Map<number, WriteError> | undefined {
  const writeErrors = (err as { writeErrors?: unknown } | null)?.writeErrors;
  if (writeErrors === undefined || writeErrors === null) return undefined;
  const list = (Array.isArray(writeErrors) ? writeErrors : [writeErrors]) as WriteError[];
  if (list.length === 0) return undefined;
  return new Map(list.map((e) => [e.index, e]));
}
