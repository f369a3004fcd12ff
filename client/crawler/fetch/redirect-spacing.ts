import { hostKey, MAX_URL_LENGTH } from '../../../shared/url/normalize.js';
import { FetchError, taskWithdrawn } from './fetch-error.js';

/** The scheduler's answer to a hop: it may go, or robots.txt disallows its target. */
export type HopAnswer = 'granted' | 'denied';

/** The redirect response a denied hop stopped at: what the fetch ends with instead of the hop. */
export interface StoppedRedirect {
  status: number;
  /** The URL that answered with the redirect. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** The hops followed before it. */
  redirects: string[];
}

/**
 * Thrown from got's beforeRedirect hook when the scheduler denies a hop: got ends the request with
 * it, and the fetcher resolves with the redirect response it carries (fetcher.ts).
 */
export class HopDenied extends Error {
  constructor(readonly stoppedAt: StoppedRedirect) {
    super(`robots.txt disallows the redirect from ${stoppedAt.url}`);
    this.name = 'HopDenied';
  }
}

export interface RedirectSpacingOptions {
  /** The URL the task fetches: its host is the one the scheduler paces. */
  url: string;
  /**
   * Asks the scheduler for a hop to a URL of the task's host (`hop`), and resolves with its answer
   * (`hop-granted`, `hop-denied`); absent: hops are not held (the scheduler neither paces the host
   * nor checks its robots.txt, or predates grants).
   */
  awaitGrant?: ((url: string) => Promise<HopAnswer>) | undefined;
  /** When the fetch's total time runs out: a hop still waiting then fails. */
  deadline: number;
  /** Aborted: a waiting hop fails as the fetch would (the task was withdrawn). */
  signal?: AbortSignal | undefined;
  now?: () => number;
}

/**
 * The politeness of one fetch's redirect chain. Redirects on the task's host are followed inside the
 * task (as browsers and Crawlee do). Such a hop asks the scheduler first: it is denied when the
 * host's robots.txt disallows its target (the fetch then ends with the redirect response), and for
 * a paced host granted when the host's delay has passed since its last request (this chain's or
 * another task's), its write then reported as a start. A hop to another host (a seed's: a page's is
 * not followed, redirect-target.ts) goes at once and is not reported.
 */
export class RedirectSpacing {
  /** The task's host key, parsed at the first redirect: most fetches have none. */
  private ownHost: string | null = null;
  private readonly now: () => number;

  constructor(private readonly o: RedirectSpacingOptions) {
    this.now = o.now ?? Date.now;
  }

  /** Whether a request to `url` goes to the task's own host. */
  isOwnHost(url: URL | string): boolean {
    return hostKey(typeof url === 'string' ? new URL(url) : url) === this.host;
  }

  private get host(): string {
    return (this.ownHost ??= hostKey(new URL(this.o.url)));
  }

  /**
   * Resolves when a hop to `next` may be sent: at once for another host, else once granted. Rejects
   * with `HopDenied` (carrying `from`, the redirect) when it is denied, with
   * `REDIRECT_WAIT_OVER_TIMEOUT` when no answer came by the fetch's deadline, and as a withdrawn
   * task when the signal aborts meanwhile.
   */
  beforeHop(next: URL, from: StoppedRedirect): Promise<void> {
    const { awaitGrant, signal } = this.o;
    if (!awaitGrant || !this.isOwnHost(next)) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(taskWithdrawn());
    // No URL this long is crawled (normalize.ts), and the scheduler refuses a `hop` naming one.
    if (next.href.length > MAX_URL_LENGTH) {
      return Promise.reject(
        new FetchError(
          'BAD_REDIRECT',
          `redirect to a URL of ${next.href.length} characters, over the ${MAX_URL_LENGTH} a crawl takes`,
        ),
      );
    }
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
      awaitGrant(next.href).then(
        (answer) => settle(() => (answer === 'granted' ? resolve() : reject(new HopDenied(from)))),
        (err: unknown) => settle(() => reject(err)),
      );
    });
  }
}
