import type { RunHostsAnswer } from '../../shared/protocol/run-hosts.js';
import { AppError } from '../../shared/errors.js';
import type { SchedulerHosts } from '../api/deps.js';
import type { SchedulerApiClient } from './scheduler-api.js';

/**
 * A run's busiest hosts, asked of the schedulers' own `GET /hosts?runId=` (scheduler/http/app.ts)
 * in turn until the one that hosts the run answers. Null when every scheduler that answered says
 * it does not host the run; 503 NO_SCHEDULER when none answered.
 */
export function createSchedulerHosts(schedulers: SchedulerApiClient): SchedulerHosts {
  return {
    async top({ runId, limit }) {
      let notHosted = 0;
      try {
        return await schedulers.ask('run hosts', '/hosts', { runId, limit: String(limit) }, (reply) => {
          if (reply.status >= 200 && reply.status < 300 && reply.body !== null) {
            return reply.body as RunHostsAnswer;
          }
          if (reply.code === 'RUN_NOT_HOSTED') notHosted += 1;
          return undefined;
        });
      } catch (err) {
        if (!(err instanceof AppError) || err.code !== 'NO_SCHEDULER' || notHosted === 0) throw err;
        return null;
      }
    },
  };
}
