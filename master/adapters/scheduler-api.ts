import { AppError, errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';

/** A scheduler the master can ask: its HTTP API (`http://host:port`) and the token it takes. */
export interface SchedulerEndpoint {
  api: string;
  token: string;
}

export interface SchedulerApiOptions {
  /** The schedulers' HTTP APIs (`http://host:port`), asked in turn. */
  apis: readonly string[];
  /** The cluster token the schedulers' APIs take (shared/config/cluster-token.ts). */
  token: string | null;
  /**
   * A scheduler found at the time of asking, asked after `apis` (the embedded one `ackcrawl serve`
   * runs, from the scheduler file it writes); null when there is none now.
   */
  discover?: () => SchedulerEndpoint | null;
  /** Per scheduler; 5 s unless given. */
  timeoutMs?: number;
  logger: Logger;
}

/** One scheduler's answer: its status and JSON body, with the error code of a refusal. */
export interface SchedulerReply {
  api: string;
  status: number;
  body: unknown;
  /** `error.code` of the body, when it has one. */
  code: string | null;
  message: string | null;
}

export interface SchedulerApiClient {
  /**
   * GET `path?params` of each scheduler in turn until `take` makes something of a reply (anything
   * but undefined). Rejects NO_SCHEDULER (503) when none is configured, none answers, or `take`
   * makes nothing of any reply; `take` may throw to end the round at once.
   */
  ask<T>(
    what: string,
    path: string,
    params: Record<string, string>,
    take: (reply: SchedulerReply) => T | undefined,
  ): Promise<T>;
}

export function noScheduler(why: string): AppError {
  return new AppError('NO_SCHEDULER', `no scheduler could be asked: ${why}`);
}

/**
 * The master's client of the schedulers' own HTTP APIs (scheduler/http/app.ts): the same bearer
 * token, timeout and "ask each in turn" for every question (why not yet?, a run's hosts).
 */
export function createSchedulerApi(options: SchedulerApiOptions): SchedulerApiClient {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const endpoints = (): SchedulerEndpoint[] => {
    const found = options.discover?.() ?? null;
    const listed =
      options.token === null ? [] : options.apis.map((api) => ({ api, token: options.token as string }));
    return found === null || options.apis.includes(found.api) ? listed : [...listed, found];
  };
  return {
    async ask(what, path, params, take) {
      const targets = endpoints();
      if (targets.length === 0) {
        throw noScheduler(
          options.apis.length === 0
            ? 'none is configured (ACKCRAWL_SCHEDULER_APIS)'
            : 'the master has no cluster token (ACKCRAWL_CLUSTER_TOKEN)',
        );
      }
      const failures: string[] = [];
      for (const { api, token } of targets) {
        const target = new URL(path, api);
        for (const [name, value] of Object.entries(params)) target.searchParams.set(name, value);
        let response: Response;
        try {
          response = await fetch(target, {
            headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
            signal: AbortSignal.timeout(timeoutMs),
          });
        } catch (err) {
          failures.push(`${api}: ${errorMessage(err)}`);
          continue;
        }
        const body = (await response.json().catch(() => null)) as {
          error?: { code?: unknown; message?: unknown };
        } | null;
        const code = typeof body?.error?.code === 'string' ? body.error.code : null;
        const message = typeof body?.error?.message === 'string' ? body.error.message : null;
        const taken = take({ api, status: response.status, body, code, message });
        if (taken !== undefined) return taken;
        failures.push(`${api}: answered ${response.status}${code ? ` ${code}` : ''}`);
      }
      options.logger.warn({ failures, what }, 'no scheduler answered');
      throw noScheduler(failures.join('; '));
    },
  };
}
