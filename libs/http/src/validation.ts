import type { Request } from 'express';
import { z } from 'zod';
import { AppError, type FieldError } from './errors';

/** zod issues as the spec's `details: [{ field, message }]`. */
export function fieldErrors(error: z.ZodError, root = '(body)'): FieldError[] {
  return error.issues.flatMap((issue): FieldError[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: [...issue.path, key].join('.'), message: 'Unknown field' }));
    }
    return [{ field: issue.path.join('.') || root, message: issue.message }];
  });
}

export function invalidInput(error: z.ZodError, where: string): AppError {
  return AppError.invalid(`Invalid ${where}`, fieldErrors(error));
}

interface Schemas {
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
  headers?: z.ZodObject;
  bodyOptional?: boolean;
}

const WHERE = {
  params: 'path parameters',
  query: 'query parameters',
  headers: 'request headers',
  body: 'request body',
} as const;

type Part = keyof typeof WHERE;

/**
 * The headers a schema names, looked up case-insensitively (`Idempotency-Key` is sent as any
 * case); a header that is absent is left out, so an optional one may be. A header sent more
 * than once is given as the list of its values (which a string schema refuses), never joined.
 */
function headersOf(schema: z.ZodObject, req: Request): Record<string, string | string[]> {
  const found: Record<string, string | string[]> = {};
  for (const name of Object.keys(schema.shape)) {
    const values = req.headersDistinct[name.toLowerCase()];
    if (values?.length) found[name] = values.length === 1 ? (values[0] as string) : values;
  }
  return found;
}

/**
 * Validates a request's params, then query, then the headers its contract reads, then body, and
 * returns them parsed (defaults applied, unknown keys stripped or refused as each schema says).
 * Bad input throws `400 INVALID_INPUT` with field details.
 */
export function parseInput(schemas: Schemas, req: Request): Record<Part, unknown> {
  const input = { params: undefined, query: undefined, headers: undefined, body: undefined } as Record<
    Part,
    unknown
  >;
  for (const part of ['params', 'query', 'headers', 'body'] as const) {
    const schema = schemas[part];
    if (!schema) continue;
    const raw = part === 'headers' ? headersOf(schemas.headers as z.ZodObject, req) : req[part];
    if (part === 'body' && raw === undefined) {
      if (schemas.bodyOptional) continue;
      throw AppError.invalid('Request body must be a JSON object', [
        { field: '(body)', message: 'Required' },
      ]);
    }
    const result = schema.safeParse(raw);
    if (!result.success) throw invalidInput(result.error, WHERE[part]);
    input[part] = result.data;
  }
  return input;
}

/** The one paging rule of every list: `page` from 1, `limit` 1 to 100 (larger is served as 100). */
export const MAX_PAGE_LIMIT = 100;

export function paginationQuery(defaultLimit = 20) {
  return z.object({
    page: z.coerce
      .number({ error: 'must be a whole number' })
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .default(1),
    limit: z.coerce
      .number({ error: 'must be a whole number' })
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .default(defaultLimit)
      // The spec caps the delivery log's limit at 100 rather than refusing more; every list does the same.
      .transform((n) => Math.min(n, MAX_PAGE_LIMIT)),
  });
}

/** A uuid (path parameters, ids in bodies). */
export const uuid = z.uuid({ error: 'must be a uuid' });
