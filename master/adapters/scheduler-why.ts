import { errorCodeFacts, type ErrorCode } from '../../shared/error-codes/index.js';
import { InvalidInputError } from '../../shared/errors.js';
import type { WhyAnswer } from '../../shared/protocol/why.js';
import type { SchedulerWhy } from '../api/deps.js';
import type { SchedulerApiClient } from './scheduler-api.js';

/**
 * "Why not yet?" asked of the schedulers' own `GET /why?url=` (scheduler/http/app.ts), in turn
 * until one answers. A scheduler's refusal of the URL itself (400) is passed on as it is; when
 * none can be reached the answer is 503 NO_SCHEDULER.
 */
export function createSchedulerWhy(schedulers: SchedulerApiClient): SchedulerWhy {
  return {
    explain: ({ runId, url }) =>
      schedulers.ask('why not yet?', '/why', { url, runId }, (reply) => {
        if (reply.status >= 200 && reply.status < 300 && reply.body !== null) return reply.body as WhyAnswer;
        if (reply.status === 400 && reply.code !== null && errorCodeFacts(reply.code) !== undefined) {
          throw new InvalidInputError(
            reply.code as ErrorCode,
            reply.message ?? 'the scheduler refused the URL',
          );
        }
        return undefined;
      }),
  };
}
