/**
 * The error codes of the partner API (docs/api.md, "Errors") and the HTTP status each one uses.
 * `SERVICE_UNAVAILABLE` is ours: the spec has no code for "a platform service is down";
 * partners may retry it (see docs/decisions.md).
 */
export const ERROR_STATUS = {
  INVALID_INPUT: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  TIER_NOT_ENTITLED: 403,
  NOT_PARTNER_SETTLED: 403,
  REGULATOR_LICENSE_REQUIRED: 403,
  REGULATOR_LICENSE_EXPIRED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  BLOCKCHAIN_ERROR: 502,
  PAYMENT_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldError {
  field: string;
  message: string;
}

/** The one error type every service throws; the error handler renders it as the spec's envelope. */
export class AppError extends Error {
  /** Always the code's own status: a code means one thing to the clients that branch on it. */
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }

  static invalid(message: string, details?: FieldError[]): AppError {
    return new AppError('INVALID_INPUT', message, details);
  }

  static notFound(what = 'Resource'): AppError {
    return new AppError('NOT_FOUND', `${what} not found`);
  }

  static unauthorized(message = 'A valid x-api-key header is required'): AppError {
    return new AppError('UNAUTHORIZED', message);
  }

  static forbidden(message: string): AppError {
    return new AppError('FORBIDDEN', message);
  }

  static conflict(message: string, details?: unknown): AppError {
    return new AppError('CONFLICT', message, details);
  }
}
