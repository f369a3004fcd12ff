import { hostKey } from '../../../shared/url/normalize.js';
import { FetchError, taskWithdrawn } from './fetch-error.js';

export interface RedirectSpacingOptions {
  /** The URL the task fetches: its host is the one the scheduler paces. */
  url: string;
  /**
   * Resolves when the scheduler grants the next request to the task's host (`hop`, `hop-granted`);
   * absent: hops are not held (the host has no delay, or the scheduler predates grants).
   */
  awaitGrant?: (() => Promise<void>) | undefined;
  /** When the fetch's total time runs out: a hop still waiting then fails. */
  deadline: number;
  /** Aborted: a waiting hop fails as the fetch would (the task was withdrawn). */
  signal?: AbortSignal | undefined;
  now?: () => number;
}

/**
 * The politeness of one fetch's redirect chain. Redirects are followed inside the task (as browsers
 * and Crawlee do). A hop back to the task's own host is a request to a host the scheduler paces:
 * it waits for the scheduler's grant, which comes when the host's delay has passed since its last
 * request (this chain's or another task's), and its write is reported as a start. A hop to another
 * host goes at once and is not reported (docs/politeness.md says what that leaves out).
 */
export class RedirectSpacing {
  private readonly host: string;
  private readonly now: () => number;

  constructor(private readonly o: RedirectSpacingOptions) {
    this.host = hostKey(new URL(o.url));
    this.now = o.now ?? Date.now;
  }

  /** Whether a request to `url` goes to the task's own host. */
  isOwnHost(url: URL | string): boolean {
    return hostKey(typeof url === 'string' ? new URL(url) : url) === this.host;
  }

  /**
   * Resolves when a hop to `next` may be sent: at once for another host, else once granted. Rejects
   * with `REDIRECT_WAIT_OVER_TIMEOUT` when no grant came by the fetch's deadline, and as a withdrawn
   * task when the signal aborts meanwhile.
   */
  beforeHop(next: URL): Promise<void> {
    const { awaitGrant, signal } = this.o;
    if (!awaitGrant || !this.isOwnHost(next)) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(taskWithdrawn());
    const overTime = (): FetchError =>
      new FetchError(
        'REDIRECT_WAIT_OVER_TIMEOUT',
        `a redirect back to ${this.host} waited for the host's delay past the fetch's total time limit`,
      );
    const remaining = this.o.deadline - this.now();
    if (remaining <= 0) return Promise.reject(overTime());
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (end: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        end();
      };
      const onAbort = (): void => settle(() => reject(taskWithdrawn()));
      const timer = setTimeout(() => settle(() => reject(overTime())), remaining);
      signal?.addEventListener('abort', onAbort, { once: true });
      awaitGrant().then(
        () => settle(resolve),
        (err: unknown) => settle(() => reject(err)),
      );
    });
  }
}
