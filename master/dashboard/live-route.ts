import { PassThrough } from 'node:stream';
import type { LiveSampler } from './live-sampler.js';
import { route, type RouteSpec } from '../api/route-spec.js';

/** A comment line now and then keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

function event(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * `GET /api/v1/live`: server-sent events for the dashboard (docs/dashboard.md). First `history`
 * (the chart points of the last minutes) and the latest `snapshot`, then a `snapshot` at each read
 * of the sampler. Needs a token with the read scope, sent as `Authorization: Bearer` (the
 * dashboard reads the stream with fetch, so no token ever travels in a URL).
 */
export function liveRoute(sampler: LiveSampler): RouteSpec {
  return route({
    method: 'get',
    path: '/live',
    operationId: 'live',
    summary:
      'Live updates as server-sent events (text/event-stream): `history`, then a `snapshot` of runs, fleet, alerts and chart points each second',
    tag: 'dashboard',
    scope: 'read',
    responses: { 200: { description: 'An event stream that lasts until the client closes it.' } },
    async handle({ ctx }) {
      const stream = new PassThrough();
      ctx.req.socket.setTimeout(0);
      ctx.req.socket.setNoDelay(true);
      ctx.set('content-type', 'text/event-stream; charset=utf-8');
      ctx.set('cache-control', 'no-cache, no-store');
      ctx.set('x-accel-buffering', 'no');
      stream.write(`retry: 2000\n\n${event('history', { points: sampler.history() })}`);
      const latest = sampler.current();
      if (latest !== null) stream.write(event('snapshot', latest));
      const unsubscribe = sampler.subscribe((snapshot) => stream.write(event('snapshot', snapshot)));
      const keepalive = setInterval(() => stream.write(': keepalive\n\n'), KEEPALIVE_MS);
      const end = (): void => {
        clearInterval(keepalive);
        unsubscribe();
      };
      stream.once('close', end);
      ctx.req.once('close', () => stream.destroy());
      return { status: 200, body: stream };
    },
  });
}
