import { AppError } from '../../shared/errors.js';
import { requestJson, type JsonAnswer } from '../../shared/http/json-request.js';

export type { JsonAnswer };

/**
 * One JSON POST to the master with the agent credential; rejects MASTER_UNREACHABLE (retriable)
 * when it does not answer within `timeoutMs`.
 */
export async function postJson(
  url: string,
  token: string,
  body: unknown,
  options: { ca?: string[] | undefined; timeoutMs: number },
): Promise<JsonAnswer> {
  try {
    return await requestJson(url, {
      method: 'POST',
      token,
      body,
      ca: options.ca,
      timeoutMs: options.timeoutMs,
    });
  } catch (err) {
    const cause = err instanceof Error ? err : new Error(String(err));
    throw new AppError(
      'MASTER_UNREACHABLE',
      `the master at ${new URL(url).origin} did not answer: ${cause.message}`,
      {
        cause,
      },
    );
  }
}
