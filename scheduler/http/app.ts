import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import { AppError, InvalidInputError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { crawlRequestSchema, type CrawlRequest, type CrawlStatus } from '../../shared/protocol/crawl-api.js';
import { formatProblems, settingsProblems } from '../../shared/crawl-settings/index.js';
import type { WhyAnswer } from '../../shared/protocol/why.js';
import {
  RUN_HOSTS_DEFAULT_LIMIT,
  RUN_HOSTS_MAX_LIMIT,
  type RunHostsAnswer,
} from '../../shared/protocol/run-hosts.js';
import { RUN_ID_PATTERN } from '../../shared/protocol/task.js';
import type { RunReport } from '../runs/run-host.js';
import { bearerMatches } from '../../shared/http/bearer.js';
import { errorResponses } from '../../shared/http/error-responses.js';
import { readJsonBody } from '../../shared/http/json-body.js';
import { requestGuards, type HostPolicy } from '../../shared/http/request-guards.js';
import type { Registry } from '../../shared/metrics/registry.js';
import { metricsRoute } from '../../shared/metrics/route.js';

export interface SchedulerAppDeps {
  /** The bearer token every route but `/health` requires. */
  token: string;
  /** Which Host headers are answered (DNS rebinding). */
  hosts: HostPolicy;
  status: () => CrawlStatus;
  submit: (request: CrawlRequest) => Promise<{ accepted: number }>;
  /** "Why not yet?" for one URL of a run (the default run when none is named). */
  why: (url: string, runId?: string) => Promise<WhyAnswer>;
  /** A run's busiest hosts and their politeness (the default run when none is named); throws RUN_NOT_HOSTED. */
  runHosts: (limit: number, runId?: string) => RunHostsAnswer;
  /** The runs this scheduler hosts, with their state and counters. */
  runs: () => RunReport[];
  logger: Logger;
  /** The process's metrics, served at `GET /metrics` with the same token (absent: no route). */
  metrics?: Registry;
}

/**
 * The scheduler's HTTP API, as a Koa app that does not listen (scheduler/ws/server.ts serves it,
 * beside the crawler endpoint, on one port; tests drive `app.callback()`):
 *
 * - `GET /health`: open, says only that the scheduler answers;
 * - `GET /crawl`, `POST /crawl` (the single crawl: the default run), `GET /why?url=…&runId=…`
 *   and `GET /hosts?runId=…&limit=…` (`runId` optional: the default run; `limit` 1-100, default
 *   20), `GET /runs` (every hosted run's state and counters),
 *   `GET /metrics` (Prometheus text, docs/metrics.md): bearer token.
 *
 * Every request passes the Host check (DNS rebinding) and the cross-origin check first; a POST
 * body must be `application/json` of at most 1 MiB. Errors are `{ error: { code, message } }`.
 */
export function createSchedulerApp(deps: SchedulerAppDeps): Koa {
  const app = new Koa();
  app.use(
    errorResponses(deps.logger, {
      service: 'scheduler',
      routesHint:
        'try GET /health, GET or POST /crawl, GET /why?url=…, GET /hosts, or a WebSocket on /crawlers',
    }),
  );
  app.use(requestGuards(deps.hosts));
  const authorize = (authorization: string | undefined): void => {
    if (!bearerMatches(authorization, deps.token)) {
      throw new AppError('UNAUTHORIZED', 'a valid bearer token is required (Authorization: Bearer <token>)');
    }
  };
  const authorized: Middleware = async (ctx, next) => {
    authorize(ctx.get('authorization') || undefined);
    await next();
  };
  if (deps.metrics)
    app.use(metricsRoute(deps.metrics, (ctx) => authorize(ctx.get('authorization') || undefined)));
  const router = new Router();
  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/crawl', authorized, (ctx) => {
    ctx.body = deps.status();
  });
  router.post('/crawl', authorized, async (ctx) => {
    const parsed = crawlRequestSchema.safeParse(await readJsonBody(ctx));
    if (!parsed.success) {
      const problems = settingsProblems(parsed.error);
      throw new InvalidInputError('INVALID_CRAWL', formatProblems(problems).join('; '), {
        details: { problems },
      });
    }
    ctx.status = 202;
    ctx.body = await deps.submit(parsed.data);
  });
  const runIdOf = (runId: string | string[] | undefined): string | undefined => {
    if (runId !== undefined && (typeof runId !== 'string' || !RUN_ID_PATTERN.test(runId))) {
      throw new InvalidInputError('FRONTIER_BAD_RUN_ID', 'runId must be 1-64 of [A-Za-z0-9_-]');
    }
    return runId;
  };
  router.get('/why', authorized, async (ctx) => {
    const url = ctx.query.url;
    if (typeof url !== 'string' || url === '') {
      throw new InvalidInputError('MISSING_URL', 'give the URL to explain: GET /why?url=https://…');
    }
    ctx.body = await deps.why(url, runIdOf(ctx.query.runId));
  });
  router.get('/hosts', authorized, (ctx) => {
    const runId = runIdOf(ctx.query.runId);
    const raw = ctx.query.limit;
    const limit = raw === undefined ? RUN_HOSTS_DEFAULT_LIMIT : Number(raw);
    if (!Number.isInteger(limit) || limit < 1 || limit > RUN_HOSTS_MAX_LIMIT) {
      throw new InvalidInputError('INVALID_REQUEST', `limit must be an integer of 1-${RUN_HOSTS_MAX_LIMIT}`);
    }
    ctx.body = deps.runHosts(limit, runId);
  });
  router.get('/runs', authorized, (ctx) => {
    ctx.body = { runs: deps.runs() };
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  // Errors are answered by errorResponses; Koa's own handler would print stack traces to stderr.
  app.silent = true;
  return app;
}
