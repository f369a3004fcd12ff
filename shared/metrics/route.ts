import type { Middleware } from 'koa';
import type { Registry } from 'prom-client';
import { AppError } from '../errors.js';

/** Where every role's Koa app answers its metrics (Prometheus's default `metrics_path`). */
export const METRICS_PATH = '/metrics';

/**
 * `GET /metrics`: the registry in the Prometheus text format, with the content type the registry
 * names. `authorize` is the app's own credential check (it throws UNAUTHORIZED or FORBIDDEN), run
 * before anything is collected. Any other path goes on to the next middleware.
 */
export function metricsRoute(
  registry: Registry,
  authorize: (ctx: Parameters<Middleware>[0]) => void | Promise<unknown>,
): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== METRICS_PATH) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      throw new AppError('METHOD_NOT_ALLOWED', `${ctx.method} ${METRICS_PATH}: only GET is answered`);
    }
    await authorize(ctx);
    const text = await registry.metrics();
    ctx.status = 200;
    ctx.set('Content-Type', registry.contentType);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = text;
  };
}
