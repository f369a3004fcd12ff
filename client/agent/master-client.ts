import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { AppError } from '../../shared/errors.js';

export interface JsonAnswer {
  status: number;
  body: unknown;
}

/**
 * One JSON POST to the master with the agent credential; rejects MASTER_UNREACHABLE (retriable)
 * when it does not answer within `timeoutMs`.
 */
export function postJson(
  url: string,
  token: string,
  body: unknown,
  options: { ca?: string[] | undefined; timeoutMs: number },
): Promise<JsonAnswer> {
  const target = new URL(url);
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const payload = body === undefined ? '' : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      target,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload ? { 'content-type': 'application/json' } : {}),
          'content-length': Buffer.byteLength(payload),
        },
        timeout: options.timeoutMs,
        ...(options.ca && target.protocol === 'https:' ? { ca: options.ca } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let parsed: unknown = null;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            parsed = null;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', (err) => reject(unreachable(url, err)));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    req.on('error', (err) => reject(unreachable(url, err)));
    req.end(payload);
  });
}

function unreachable(url: string, cause: Error): AppError {
  return new AppError(
    'MASTER_UNREACHABLE',
    `the master at ${new URL(url).origin} did not answer: ${cause.message}`,
    {
      cause,
    },
  );
}
