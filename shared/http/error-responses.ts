import type { Middleware } from 'koa';
import { apiStatus } from '../error-codes/index.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { refuseSocket } from './refuse-socket.js';

/** One thing wrong with a request: the field (a dotted path, `body` for the whole) and what. */
export interface Problem {
  field: string;
  message: string;
}

export interface ErrorBody {
  error: { code: string; message: string; problems?: Problem[] };
}

export interface ErrorResponseOptions {
  /** Who answers, in the message of a 5xx (`the scheduler failed to answer`). */
  service?: string;
  /** Appended to the 404 for an unknown route: which routes there are. */
  routesHint?: string;
}

/** The problems an InvalidInputError carries in `details.problems`, if any. */
function problemsOf(err: AppError): Problem[] | undefined {
  const problems = err.details?.problems;
  if (!Array.isArray(problems)) return undefined;
  return problems.filter(
    (p): p is Problem =>
      typeof p === 'object' && p !== null && typeof p.field === 'string' && typeof p.message === 'string',
  );
}

/** Seconds a client is told to wait (`Retry-After`) when a store or broker we need is away. */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

/**
 * What an error becomes on the wire: its status, a stable code and a message for a person. A
 * server-side error that trying again can help (a store or broker down or busy: SQL_UNAVAILABLE,
 * FRONTIER_UNAVAILABLE, ...) is 503 with `Retry-After`, unless its code has a status of its own.
 */
export function describeError(
  err: unknown,
  service = 'server',
): { status: number; code: string; message: string; problems?: Problem[]; retryAfterS?: number } {
  if (err instanceof AppError) {
    const status = err.status ?? (err.name === 'InvalidInputError' ? 400 : err.retriable ? 503 : 500);
    if (status < 500) {
      const problems = problemsOf(err);
      return { status, code: err.code, message: err.message, ...(problems ? { problems } : {}) };
    }
    // A failure of ours: its message may name internals, the log has it whole.
    if (status === 503) {
      return {
        status,
        code: err.code,
        message: `the ${service} cannot answer now (a service it needs is unavailable); try again shortly, its log says why`,
        retryAfterS: UNAVAILABLE_RETRY_AFTER_S,
      };
    }
    return { status, code: err.code, message: `the ${service} failed to answer; its log says why` };
  }
  // Errors Koa raises itself (http-errors) carry a status and say whether their message is safe.
  const http = err as { status?: unknown; expose?: unknown; message?: unknown };
  if (typeof http.status === 'number' && http.status >= 400 && http.status < 500 && http.expose === true) {
    return { status: http.status, code: `HTTP_${http.status}`, message: String(http.message) };
  }
  return {
    status: apiStatus('INTERNAL'),
    code: 'INTERNAL',
    message: `the ${service} failed to answer; its log says why`,
  };
}

/**
 * Every answer that is not a success is JSON `{ error: { code, message } }` (and `problems`, each
 * `{ field, message }`, when an InvalidInputError lists them in `details`), with no stack trace,
 * and closes the connection. A request refused while its body still comes (a 401 before a large
 * POST is read, a 413) is answered on the socket and nothing more of it is read.
 * Unknown paths are 404 NOT_FOUND, known paths with another method 405 METHOD_NOT_ALLOWED.
 */
export function errorResponses(logger: Logger, options: ErrorResponseOptions = {}): Middleware {
  const service = options.service ?? 'server';
  const hint = options.routesHint ? `: ${options.routesHint}` : '';
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body !== undefined && ctx.body !== null) return;
      if (ctx.status === 404) throw new AppError('NOT_FOUND', `no such route${hint}`);
      if (ctx.status === 405 || ctx.status === 501) {
        throw new AppError('METHOD_NOT_ALLOWED', `use ${ctx.response.get('Allow') || 'another method'}`);
      }
    } catch (err) {
      const { status, code, message, problems, retryAfterS } = describeError(err, service);
      if (status >= 500) logger.error({ err, method: ctx.method, path: ctx.path }, `${service} API failure`);
      const headers: Record<string, string> =
        status === 401 ? { 'WWW-Authenticate': 'Bearer realm="ackcrawl"' } : {};
      if (retryAfterS !== undefined) headers['Retry-After'] = String(retryAfterS);
      if (!ctx.req.complete && !ctx.headerSent) {
        ctx.respond = false;
        refuseSocket(ctx.req.socket, status, { code, message }, headers);
        return;
      }
      ctx.status = status;
      ctx.set({ ...headers, Connection: 'close' });
      ctx.body = { error: { code, message, ...(problems ? { problems } : {}) } } satisfies ErrorBody;
    }
  };
}
