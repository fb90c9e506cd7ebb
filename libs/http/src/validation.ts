import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { AppError, type FieldError } from './errors';

/** zod issues as the spec's `details: [{ field, message }]`. */
export function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.flatMap((issue): FieldError[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: [...issue.path, key].join('.'), message: 'Unknown field' }));
    }
    return [{ field: issue.path.join('.') || '(body)', message: issue.message }];
  });
}

export function invalidInput(error: z.ZodError, where: string): AppError {
  return AppError.invalid(`Invalid ${where}`, fieldErrors(error));
}

interface Schemas {
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
}

type Parsed<S extends Schemas> = {
  body: S['body'] extends z.ZodType ? z.infer<S['body']> : undefined;
  query: S['query'] extends z.ZodType ? z.infer<S['query']> : undefined;
  params: S['params'] extends z.ZodType ? z.infer<S['params']> : undefined;
};

/**
 * A route handler whose input is validated (params, then query, then body) and handed to
 * it already parsed, with defaults applied and unknown keys stripped or rejected by the
 * schema. Bad input never reaches the handler: it becomes `400 INVALID_INPUT`.
 */
export function route<S extends Schemas>(
  schemas: S,
  handler: (input: Parsed<S>, req: Request, res: Response) => Promise<void> | void,
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const input = {} as Record<'body' | 'query' | 'params', unknown>;
    for (const part of ['params', 'query', 'body'] as const) {
      const schema = schemas[part];
      if (!schema) continue;
      const raw = part === 'body' && req.body === undefined ? undefined : req[part];
      const result = schema.safeParse(raw);
      if (!result.success) {
        if (part === 'body' && raw === undefined) {
          return next(
            AppError.invalid('Request body must be a JSON object', [
              { field: '(body)', message: 'Required' },
            ]),
          );
        }
        return next(
          invalidInput(
            result.error,
            part === 'body' ? 'request body' : part === 'query' ? 'query parameters' : 'path parameters',
          ),
        );
      }
      input[part] = result.data;
    }
    await handler(input as Parsed<S>, req, res);
  };
}

/** Query `page`/`limit` with the platform's defaults and cap. */
export function paginationQuery(maxLimit = 100, defaultLimit = 20) {
  return z.object({
    page: z.coerce.number().int().min(1).default(1),
    limit: z.coerce.number().int().min(1).max(maxLimit).default(defaultLimit),
  });
}

/** A uuid path parameter. */
export const uuidParam = z.uuid({ error: 'must be a uuid' });
