import type { Middleware } from 'koa';
import { apiStatus } from '../../shared/error-codes/index.js';
import { AppError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { refuseSocket } from './refuse-socket.js';

export interface ErrorBody {
  /** `problems`: what is wrong with a request body, field by field (INVALID_CRAWL). */
  error: { code: string; message: string; problems?: unknown[] };
}

const ROUTES = 'try GET /health, GET or POST /crawl, GET /why?url=…, or a WebSocket on /crawlers';

/** What an error becomes on the wire: its status, a stable code and a message for a person. */
export function describeError(err: unknown): ErrorBody['error'] & { status: number } {
  if (err instanceof AppError) {
    const status = err.status ?? (err.name === 'InvalidInputError' ? 400 : 500);
    const problems = err.details?.problems;
    if (status < 500) {
      return {
        status,
        code: err.code,
        message: err.message,
        ...(Array.isArray(problems) ? { problems } : {}),
      };
    }
    // A failure of ours: its message may name internals, the log has it whole.
    return { status, code: err.code, message: 'the scheduler failed to answer; its log says why' };
  }
  // Errors Koa raises itself (http-errors) carry a status and say whether their message is safe.
  const http = err as { status?: unknown; expose?: unknown; message?: unknown };
  if (typeof http.status === 'number' && http.status >= 400 && http.status < 500 && http.expose === true) {
    return { status: http.status, code: `HTTP_${http.status}`, message: String(http.message) };
  }
  return {
    status: apiStatus('INTERNAL'),
    code: 'INTERNAL',
    message: 'the scheduler failed to answer; its log says why',
  };
}

/**
 * Every answer that is not a success is JSON `{ error: { code, message } }`, with no stack trace,
 * and closes the connection. A request refused while its body still comes (a 401 before a large
 * POST is read, a 413) is answered on the socket and nothing more of it is read.
 * Unknown paths are 404 NOT_FOUND, known paths with another method 405 METHOD_NOT_ALLOWED.
 */
export function errorResponses(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body !== undefined && ctx.body !== null) return;
      if (ctx.status === 404) throw new AppError('NOT_FOUND', `no such route: ${ROUTES}`);
      if (ctx.status === 405 || ctx.status === 501) {
        throw new AppError('METHOD_NOT_ALLOWED', `use ${ctx.response.get('Allow') || 'another method'}`);
      }
    } catch (err) {
      const { status, ...error } = describeError(err);
      const { code, message } = error;
      if (status >= 500) logger.error({ err, method: ctx.method, path: ctx.path }, 'scheduler API failure');
      const headers: Record<string, string> =
        status === 401 ? { 'WWW-Authenticate': 'Bearer realm="ackcrawl"' } : {};
      if (!ctx.req.complete && !ctx.headerSent) {
        ctx.respond = false;
        refuseSocket(ctx.req.socket, status, { code, message }, headers);
        return;
      }
      ctx.status = status;
      ctx.set({ ...headers, Connection: 'close' });
      ctx.body = { error } satisfies ErrorBody;
    }
  };
}
