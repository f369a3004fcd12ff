import got from 'got';
import type { Agents } from '../../shared/net/address-guard.js';

/** What one POST came to: the receiver's status and Retry-After, or why there was none. */
export type SendResult =
  { kind: 'answered'; status: number; retryAfter: string | undefined } | { kind: 'failed'; error: string };

export type WebhookSender = (request: {
  url: string;
  headers: Record<string, string>;
  body: string;
}) => Promise<SendResult>;

/**
 * POSTs with got through the address-guarded agents: one try (the delivery loop retries), a
 * timeout on the whole exchange, no redirects (a 3xx is not a 2xx), and the answer's body never
 * read (a receiver cannot make the master buffer anything).
 */
export function createWebhookSender(options: {
  agents: Agents;
  timeoutMs: number;
  userAgent: string;
}): WebhookSender {
  return ({ url, headers, body }) =>
    new Promise<SendResult>((resolve) => {
      const stream = got.stream.post(url, {
        body,
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': options.userAgent },
        agent: { http: options.agents.http, https: options.agents.https },
        timeout: { request: options.timeoutMs },
        retry: { limit: 0 },
        followRedirect: false,
        throwHttpErrors: false,
        decompress: false,
      });
      let settled = false;
      stream.once(
        'response',
        (res: { statusCode: number; headers: Record<string, string | string[] | undefined> }) => {
          settled = true;
          const retryAfter = res.headers['retry-after'];
          resolve({
            kind: 'answered',
            status: res.statusCode,
            retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
          });
          stream.destroy();
        },
      );
      stream.on('error', (err: Error) => {
        if (settled) return;
        settled = true;
        resolve({ kind: 'failed', error: err.message.slice(0, 500) });
      });
      stream.resume();
    });
}
