import type { Request, Response } from 'express';
import { errorBody } from './envelope';

/** Every request's deadline unless its app sets another (see `REQUEST_DEADLINE_MS`). */
export const DEFAULT_REQUEST_DEADLINE_MS = 15_000;

declare module 'node:http' {
  interface IncomingMessage {
    /** Set when the request's deadline passed and it has been answered `503`. */
    deadlinePassed?: boolean;
  }
}

/**
 * Answers `503 SERVICE_UNAVAILABLE` when a request is not answered within `deadlineMs`, so a
 * hung dependency gives the caller a fast, definite answer, never a hung connection. The
 * handler still running is told by `answeredAfterDeadline`; whatever it answers later is
 * dropped, and the request's log line says it was late. Returns the timer, which the request's
 * one completion listener (request-log.ts) clears: a flag rather than an `AbortController`, and
 * no listeners of its own, since every request pays for them and nothing reads a signal.
 */
export function startDeadline(
  req: Request,
  res: Response,
  deadlineMs: number,
  seconds: number,
): NodeJS.Timeout {
  return setTimeout(() => {
    if (res.headersSent) return;
    req.deadlinePassed = true;
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
}

/** `deadlineMs` as the 503's message writes it. */
export function deadlineSeconds(deadlineMs: number): number {
  return Number((deadlineMs / 1000).toFixed(3));
}

/** Whether the deadline has already answered this request (a late handler must not write). */
export function answeredAfterDeadline(req: Request): boolean {
  return req.deadlinePassed === true;
}
