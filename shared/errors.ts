/**
 * One error base for the whole project. `code` is stable (it crosses the WebSocket and lands in
 * page records); `retriable` tells the caller whether trying again can help; `status` is the HTTP
 * status an API should answer with.
 */
export interface AppErrorOptions {
  retriable?: boolean;
  status?: number;
  cause?: unknown;
  details?: Record<string, unknown>;
}

export class AppError extends Error {
  readonly code: string;
  readonly retriable: boolean;
  readonly status: number | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: string, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retriable = options.retriable ?? false;
    this.status = options.status;
    this.details = options.details;
  }

  toJSON(): { code: string; message: string; retriable: boolean } {
    return { code: this.code, message: this.message, retriable: this.retriable };
  }
}

/** A value from outside (URL, option, API body, frame) that cannot be used as given. Not retriable. */
export class InvalidInputError extends AppError {
  constructor(code: string, message: string, options: Omit<AppErrorOptions, 'retriable'> = {}) {
    super(code, message, { ...options, retriable: false, status: options.status ?? 400 });
  }
}

/** Configuration that failed validation at start; every problem is listed in `problems`. */
export class ConfigError extends AppError {
  readonly problems: string[];
  constructor(problems: string[]) {
    super('CONFIG_INVALID', `invalid configuration:\n  - ${problems.join('\n  - ')}`, { retriable: false });
    this.problems = problems;
  }
}

/** A peer broke the wire protocol: the frame is rejected with this code, the session lives on. */
export class ProtocolError extends AppError {
  constructor(code: string, message: string, options: AppErrorOptions = {}) {
    super(code, message, { ...options, retriable: false });
  }
}

/** A backing service (disk, broker, sink) failed; the operation may succeed if tried again. */
export class StorageError extends AppError {
  constructor(code: string, message: string, options: AppErrorOptions = {}) {
    super(code, message, { retriable: true, ...options });
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
