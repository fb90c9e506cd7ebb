/** MongoDB's duplicate-key error (11000), with the fields of the unique index that refused the write. */
export function duplicateKeyFields(err: unknown): string[] | undefined {
  const e = err as { code?: number; keyPattern?: Record<string, unknown> } | null;
  if (e?.code !== 11000) return undefined;
  return Object.keys(e.keyPattern ?? {});
}

export function isDuplicateKey(err: unknown): boolean {
  return duplicateKeyFields(err) !== undefined;
}
