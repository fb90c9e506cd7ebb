import type { NextFunction, Request, Response } from 'express';
import { errorBody } from './envelope';

/** Every request's deadline unless its app sets another (see `REQUEST_DEADLINE_MS`). */
export const DEFAULT_REQUEST_DEADLINE_MS = 15_000;

declare module 'node:http' {
  interface IncomingMessage {
    /** Aborted when the request's deadline passes and it has been answered `503`. */
    deadline?: AbortSignal;
  }
}

/**
 * Answers `503 SERVICE_UNAVAILABLE` when a request is not answered within `deadlineMs`, so a
 * hung dependency gives the caller a fast, definite answer, never a hung connection. The
 * handler still running is told by `req.deadline`; whatever it answers later is dropped
 * (`answeredAfterDeadline`), and the request's log line says it was late.
 */
export function requestDeadline(deadlineMs: number) {
  const seconds = Number((deadlineMs / 1000).toFixed(3));
  return (req: Request, res: Response, next: NextFunction): void => {
    const controller = new AbortController();
    req.deadline = controller.signal;
    const timer = setTimeout(() => {
      if (res.headersSent) return;
      controller.abort();
      res.setHeader('Retry-After', '5');
      res
        .status(503)
        .json(
          errorBody(
            'SERVICE_UNAVAILABLE',
            `The request did not complete within ${seconds} s; it may still take effect, so check before repeating a change`,
          ),
        );
    }, deadlineMs);
    const clear = () => clearTimeout(timer);
    res.once('finish', clear);
    res.once('close', clear);
    next();
  };
}

/** Whether the deadline has already answered this request (a late handler must not write). */
export function answeredAfterDeadline(req: Request): boolean {
  return req.deadline?.aborted === true;
}
