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
  query?: z.ZodObject;
  params?: z.ZodType;
  headers?: z.ZodObject;
  bodyOptional?: boolean;
  /** Query parameters it does not declare are ignored, not refused (see `RouteContract`). */
  ignoresQuery?: boolean;
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
 * The query as the route may read it, and what is wrong with the rest: every parameter must be
 * one the route declares, given once. A parameter it does not know (`foo=bar`, or `status[]=X`,
 * which express 5's parser keeps as the name `status[]`) would otherwise be dropped without a
 * word, and the partner would take the unfiltered answer for the filtered one (a filter given
 * twice would be read as one of its values, or none). So each is `400 INVALID_INPUT` naming it.
 */
function checkedQuery(
  schema: z.ZodObject | undefined,
  query: Record<string, unknown>,
): { declared: Record<string, unknown>; problems: FieldError[] } {
  const names = schema ? Object.keys(schema.shape) : [];
  const takes = names.length ? `this endpoint takes ${names.join(', ')}` : 'this endpoint takes none';
  const declared: Record<string, unknown> = {};
  const problems: FieldError[] = [];
  for (const [name, value] of Object.entries(query)) {
    const field = name === '' ? '(query)' : name;
    if (!names.includes(name)) {
      const bracketed = /^([^[\]]+)\[/.exec(name)?.[1];
      problems.push({
        field,
        message:
          bracketed !== undefined && names.includes(bracketed)
            ? `Unknown query parameter: send ${bracketed}=<value> once, without brackets`
            : `Unknown query parameter: ${takes}`,
      });
    } else if (Array.isArray(value)) {
      problems.push({ field, message: 'must be given once' });
    } else {
      declared[name] = value;
    }
  }
  return { declared, problems };
}

/**
 * Validates a request's params, then query, then the headers its contract reads, then body, and
 * returns them parsed (defaults applied, unknown keys stripped or refused as each schema says;
 * an undeclared or repeated query parameter is refused, see `checkedQuery`).
 * Bad input throws `400 INVALID_INPUT` with field details.
 */
export function parseInput(schemas: Schemas, req: Request): Record<Part, unknown> {
  const input = { params: undefined, query: undefined, headers: undefined, body: undefined } as Record<
    Part,
    unknown
  >;
  for (const part of ['params', 'query', 'headers', 'body'] as const) {
    if (part === 'query' && !schemas.ignoresQuery) {
      input.query = parseQuery(schemas.query, req.query as Record<string, unknown>);
      continue;
    }
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

function parseQuery(schema: z.ZodObject | undefined, query: Record<string, unknown>): unknown {
  const { declared, problems } = checkedQuery(schema, query);
  const result = schema?.safeParse(declared);
  if (result && !result.success) problems.push(...fieldErrors(result.error, '(query)'));
  if (problems.length) throw AppError.invalid(`Invalid ${WHERE.query}`, problems);
  return result?.data;
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

/**
 * A uuid (path parameters, query and body ids), in lower case: uuids compare case-insensitively
 * (RFC 9562) and we store them as `randomUUID()` writes them, so `3F2B…` and `3f2b…` name the
 * same resource. Any case is accepted; the handler sees lower case.
 */
export const uuid = z.uuid({ error: 'must be a uuid' }).toLowerCase();
