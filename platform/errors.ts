/**
 * One error type with a stable code, and the contract's error envelope (CONTRACT §1.1) that every
 * service and the gateway answer with.
 */
import { STATUS_CODES } from 'node:http';

export class AppError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly validationErrors: string[] | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const VALIDATION_FAILED = 'Validation failed for one or more fields';
export const AUTHENTICATION_REQUIRED = 'Authentication is required to access this resource';

export const badRequest = (message: string, code = 'BAD_REQUEST') => new AppError(code, message, 400);
export const validationFailed = (errors: string[]) => new AppError('VALIDATION_FAILED', VALIDATION_FAILED, 400, errors);
export const unauthenticated = (message = AUTHENTICATION_REQUIRED) => new AppError('UNAUTHENTICATED', message, 401);
export const forbidden = (message = 'Access is denied') => new AppError('FORBIDDEN', message, 403);
export const notFound = (message: string, code = 'NOT_FOUND') => new AppError(code, message, 404);
export const conflict = (message: string, code = 'CONFLICT') => new AppError(code, message, 409);
export const serviceUnavailable = (message: string, code = 'SERVICE_UNAVAILABLE') => new AppError(code, message, 503);

export interface ErrorEnvelope {
  timestamp: string;
  status: number;
  error: string;
  message: string;
  path: string;
  validationErrors: string[] | null;
}

/** ISO-8601 in UTC without zone, as the contract writes timestamps. */
export function contractTimestamp(date: Date = new Date()): string {
  return date.toISOString().slice(0, 23);
}

export function errorEnvelope(status: number, message: string, path: string, validationErrors: string[] | null = null): ErrorEnvelope {
  return {
    timestamp: contractTimestamp(),
    status,
    error: STATUS_CODES[status] ?? 'Error',
    message,
    path,
    validationErrors,
  };
}
