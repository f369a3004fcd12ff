import { errorCodeFacts, type ErrorCode } from './error-codes/index.js';

export type { ErrorCode } from './error-codes/index.js';

/**
 * One error base for the whole project. `code` is stable (it crosses the WebSocket and lands in
 * page records) and catalogued (shared/error-codes), which says whether trying again can help
 * (`retriable`, the catalogue's alone) and the HTTP status an API answers with (`status`, unless
 * given here).
 */
export interface AppErrorOptions {
  status?: number;
  cause?: unknown;
  details?: Record<string, unknown>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;
  readonly status: number | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const facts = errorCodeFacts(code);
    this.name = new.target.name;
    this.code = code;
    this.retriable = facts?.retriable ?? false;
    this.status = options.status ?? facts?.status;
    this.details = options.details;
  }

  toJSON(): { code: ErrorCode; message: string; retriable: boolean } {
    return { code: this.code, message: this.message, retriable: this.retriable };
  }
}

/** A value from outside (URL, option, API body, frame) that cannot be used as given (400 by default). */
export class InvalidInputError extends AppError {
  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(code, message, {
      ...options,
      status: options.status ?? errorCodeFacts(code)?.status ?? 400,
    });
  }
}

/** Configuration that failed validation at start; every problem is listed in `problems`. */
export class ConfigError extends AppError {
  readonly problems: string[];
  constructor(problems: string[]) {
    super('CONFIG_INVALID', `invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.problems = problems;
  }
}

/** A peer broke the wire protocol: the frame is rejected with this code, the session lives on. */
export class ProtocolError extends AppError {
  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(code, message, options);
  }
}

/** A backing service (disk, broker, sink) failed; whether trying again helps is the catalogue's call. */
export class StorageError extends AppError {
  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(code, message, options);
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
