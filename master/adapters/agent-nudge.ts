import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Logger } from '../../shared/logger.js';

const NUDGE_TIMEOUT_MS = 2_000;

/**
 * `POST <agent url>/api/v1/sync` with the agent credential: the agent sends its heartbeat now and
 * takes the master's desired state from the answer. Fire and forget: the agent's own heartbeat
 * carries the change anyway, a little later.
 */
export function createAgentNudge(deps: {
  agentToken: string;
  ca?: string[] | undefined;
  logger: Logger;
}): (url: string) => void {
  return (url) => {
    let target: URL;
    try {
      target = new URL('/api/v1/sync', url);
    } catch {
      deps.logger.warn({ url }, 'agent URL cannot be parsed; it will see the change at its next heartbeat');
      return;
    }
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(
      target,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${deps.agentToken}`, 'content-length': '0' },
        timeout: NUDGE_TIMEOUT_MS,
        ...(deps.ca && target.protocol === 'https:' ? { ca: deps.ca } : {}),
      },
      (res) => {
        res.resume();
        if ((res.statusCode ?? 0) >= 300) {
          deps.logger.warn(
            { url, status: res.statusCode },
            'agent refused the nudge; it will see the change at its next heartbeat',
          );
        }
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) =>
      deps.logger.debug(
        { url, err: err.message },
        'agent not reached; it will see the change at its next heartbeat',
      ),
    );
    req.end();
  };
}
