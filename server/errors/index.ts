// One error type for the domain, translated once to tRPC and HTTP errors.
export const errorCodes = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  PRECONDITION_FAILED: 412,
  UNPROCESSABLE: 422,
  TOO_MANY_REQUESTS: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type AppErrorCode = keyof typeof errorCodes;

export class AppError extends Error {
  readonly code: AppErrorCode;
  /** A stable, machine-readable reason, e.g. "illegal_transition" or "already_approved". */
  readonly reason?: string;
  readonly details?: Record<string, unknown>;

  constructor(
    code: AppErrorCode,
    message: string,
    options?: { reason?: string; details?: Record<string, unknown>; cause?: unknown },
  ) {
    super(message, { cause: options?.cause });
    this.name = "AppError";
    this.code = code;
    this.reason = options?.reason;
    this.details = options?.details;
  }

  get status(): number {
    return errorCodes[this.code];
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
