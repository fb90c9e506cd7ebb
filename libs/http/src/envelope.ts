import type { Response } from 'express';

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  totalPages: number;
}

/** `{ success: true, data }` (spec 2.1). */
export function sendData(res: Response, data: unknown, status = 200): void {
  res.status(status).json({ success: true, data });
}

/** `{ success: true, data: [...], pagination: { page, limit, total, totalPages } }` (spec 2.1). */
export function sendPage(
  res: Response,
  items: unknown[],
  page: { page: number; limit: number; total: number },
): void {
  res.status(200).json({ success: true, data: items, pagination: paginationOf(page) });
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

/** `{ success: false, error: { code, message, details? } }` (spec 2.1). */
export function errorBody(code: string, message: string, details?: unknown) {
  return {
    success: false as const,
    error: details === undefined ? { code, message } : { code, message, details },
  };
}
