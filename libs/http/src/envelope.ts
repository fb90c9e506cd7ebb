export interface Pagination {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}

export function paginationOf({
  page,
  limit,
  total,
}: {
  page: number;
  limit: number;
  total: number;
}): Pagination {
  return { page, limit, total, totalPages: Math.ceil(total / limit) };
}

/** `{ success: false, error: { code, message, details? } }` (docs/api.md, "Envelopes"). */
export function errorBody(code: string, message: string, details?: unknown) {
  return {
    success: false as const,
    error: details === undefined ? { code, message } : { code, message, details },
  };
}
