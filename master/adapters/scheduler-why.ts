import { errorCodeFacts, type ErrorCode } from '../../shared/error-codes/index.js';
import { AppError, InvalidInputError, errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { WhyAnswer } from '../../shared/protocol/why.js';
import type { SchedulerWhy } from '../api/deps.js';

export interface SchedulerWhyOptions {
  /** The schedulers' HTTP APIs (`http://host:port`), asked in turn. */
  apis: readonly string[];
  /** The cluster token the schedulers' APIs take (shared/config/cluster-token.ts). */
  token: string | null;
  /** Per scheduler; 5 s unless given. */
  timeoutMs?: number;
  logger: Logger;
}

function noScheduler(why: string): AppError {
  return new AppError('NO_SCHEDULER', `no scheduler could be asked: ${why}`);
}

/**
 * "Why not yet?" asked of the schedulers' own `GET /why?url=` (scheduler/http/app.ts), in turn
 * until one answers. A scheduler's refusal of the URL itself (400) is passed on as it is; when
 * none can be reached the answer is 503 NO_SCHEDULER.
 */
export function createSchedulerWhy(options: SchedulerWhyOptions): SchedulerWhy {
  const timeoutMs = options.timeoutMs ?? 5_000;
  return {
    async explain({ runId, url }) {
      if (options.apis.length === 0) throw noScheduler('none is configured (ACKCRAWL_SCHEDULER_APIS)');
      if (options.token === null)
        throw noScheduler('the master has no cluster token (ACKCRAWL_CLUSTER_TOKEN)');
      const failures: string[] = [];
      for (const api of options.apis) {
        const target = new URL('/why', api);
        target.searchParams.set('url', url);
        target.searchParams.set('runId', runId);
        let response: Response;
        try {
          response = await fetch(target, {
            headers: { authorization: `Bearer ${options.token}`, accept: 'application/json' },
            signal: AbortSignal.timeout(timeoutMs),
          });
        } catch (err) {
          failures.push(`${api}: ${errorMessage(err)}`);
          continue;
        }
        const body = (await response.json().catch(() => null)) as
          (WhyAnswer & { error?: { code?: unknown; message?: unknown } }) | null;
        if (response.ok && body !== null) return body;
        const code = typeof body?.error?.code === 'string' ? body.error.code : null;
        if (response.status === 400 && code !== null && errorCodeFacts(code) !== undefined) {
          throw new InvalidInputError(
            code as ErrorCode,
            String(body?.error?.message ?? 'the scheduler refused the URL'),
          );
        }
        failures.push(`${api}: answered ${response.status}${code ? ` ${code}` : ''}`);
      }
      options.logger.warn({ failures }, 'no scheduler answered a why-not-yet question');
      throw noScheduler(failures.join('; '));
    },
  };
}
