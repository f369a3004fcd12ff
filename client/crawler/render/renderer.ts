import type { BrowserContext, Page, Request, Response } from 'playwright-core';
import type { Logger } from '../../../shared/logger.js';
import type { FetchSettings } from '../../../shared/protocol/messages.js';
import { FetchError, taskWithdrawn } from '../fetch/fetch-error.js';
import { keptHeaders, type FetchedPage } from '../fetch/fetcher.js';
import { RunHeaders } from '../fetch/request-headers.js';
import { isHtmlContentType } from '../parse/content-type.js';
import type { Resolved } from './address-guard.js';
import type { BrowserHost } from './browser-host.js';
import { BLOCKED_HEADER, FAILED_HEADER, startGuardProxy, type GuardProxy } from './guard-proxy.js';
import { navigationError, renderFailed } from './render-error.js';
import { routeRunHeaders } from './run-headers-route.js';
import { Slots } from './slots.js';

export interface RendererOptions {
  host: BrowserHost;
  logger: Logger;
  /** Pages rendered at once in this process. */
  concurrency: number;
  /** After the load event, how long to wait at most for the network to settle. */
  idleTimeoutMs: number;
  /** The guard proxy's address rule (default: public addresses only, by the system resolver). */
  resolve?: (hostname: string) => Promise<Resolved>;
}

const remaining = (deadline: number): number => Math.max(1, deadline - Date.now());

/** Main-frame navigations of a rendered page kept as its links, at most (a script may loop). */
const MAX_NAVIGATIONS = 20;

const withoutFragment = (url: string): string => url.replace(/#.*$/s, '');

/**
 * Renders pages in the process's one browser: a fresh context per page (no cookies or storage
 * shared between tasks), at most `concurrency` at once. A page loads (the `load` event), then gets
 * up to `idleTimeoutMs` for the network to settle (500 ms without requests), and its DOM is
 * serialised. The whole page, queueing excluded, fits in the fetch's `totalTimeoutMs`.
 *
 * Unless the job allows private addresses, the context sends all its traffic through the guard
 * proxy, which refuses loopback, private and link-local addresses on every hop (see
 * docs/configuration.md, "Rendering", for what this covers).
 */
export class Renderer {
  private readonly slots: Slots;
  private proxy: Promise<GuardProxy> | null = null;

  constructor(private readonly options: RendererOptions) {
    this.slots = new Slots(options.concurrency);
  }

  /**
   * Renders `url`. When `signal` is aborted (the task was withdrawn: its connection to the
   * scheduler ended) the render fails at once with CONNECTION_ABORTED: a render still waiting for
   * a slot leaves the queue and opens no page, and a page being rendered is closed, which stops
   * its requests.
   *
   * Given `document`, the page's main document as the crawler's fetcher got it (redirects
   * followed there, each hop checked against robots.txt and the host's politeness), the browser
   * is handed that response at `document.finalUrl` and requests nothing for it: only the page's
   * scripts, styles, frames and fetches go to the network. The record keeps the document's
   * status, headers and redirect chain. Without it, the browser fetches `url` itself.
   */
  async render(
    url: string,
    settings: FetchSettings,
    signal?: AbortSignal,
    document?: FetchedPage,
  ): Promise<FetchedPage> {
    let release: () => void;
    try {
      release = await this.slots.acquire(signal);
    } catch (err) {
      if (signal?.aborted) throw taskWithdrawn();
      throw err;
    }
    try {
      return await this.renderNow(url, settings, signal, document);
    } finally {
      release();
    }
  }

  private guardProxy(): Promise<GuardProxy> {
    this.proxy ??= startGuardProxy({
      logger: this.options.logger,
      ...(this.options.resolve ? { resolve: this.options.resolve } : {}),
    });
    return this.proxy;
  }

  private async renderNow(
    url: string,
    settings: FetchSettings,
    signal: AbortSignal | undefined,
    document: FetchedPage | undefined,
  ): Promise<FetchedPage> {
    const deadline = Date.now() + settings.totalTimeoutMs;
    const proxy = settings.allowPrivate ? null : await this.guardProxy();
    let context: BrowserContext;
    try {
      const browser = await this.options.host.get();
      context = await browser.newContext({
        userAgent: settings.userAgent,
        acceptDownloads: false,
        serviceWorkers: 'block',
        // `<-loopback>`: without it Chromium sends loopback requests around any proxy.
        ...(proxy ? { proxy: { server: proxy.url, bypass: '<-loopback>' } } : {}),
      });
      const opened = context;
      await routeRunHeaders(opened, RunHeaders.of(settings.headers)).catch(async (err: unknown) => {
        await opened.close().catch(() => undefined);
        throw err;
      });
    } catch (err) {
      throw renderFailed(`could not open a browser page: ${(err as Error).message}`, err);
    }
    let timer: NodeJS.Timeout | undefined;
    let onAbort = (): void => undefined;
    const withdrawn = new Promise<never>((_, reject) => {
      onAbort = () => reject(taskWithdrawn());
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
    // A script that never yields blocks even the DOM read: the deadline does not wait for it.
    const overdue = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new FetchError('RENDER_TIMEOUT', `the page was not rendered in ${settings.totalTimeoutMs} ms`),
          ),
        remaining(deadline) + 1_000,
      );
    });
    try {
      const visit = document
        ? this.visitFetched(context, document, settings, deadline, proxy)
        : this.visit(context, url, settings, deadline, proxy);
      return await Promise.race([visit, overdue, withdrawn]);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      const closed = await Promise.race([
        context.close().then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000).unref()),
      ]).catch(() => false);
      if (!closed) {
        this.options.logger.warn({ url }, 'browser did not close a page; restarting it');
        await this.options.host.restart();
      }
    }
  }

  private async visit(
    context: BrowserContext,
    url: string,
    settings: FetchSettings,
    deadline: number,
    proxy: GuardProxy | null,
  ): Promise<FetchedPage> {
    const page = await context.newPage();
    let mainResponse: Response | null = null;
    page.on('response', (r) => {
      if (r.frame() === page.mainFrame() && r.request().isNavigationRequest()) mainResponse = r;
    });
    let response: Response | null;
    try {
      response = await page.goto(url, { waitUntil: 'load', timeout: remaining(deadline) });
    } catch (err) {
      // An error status with an empty body: Chromium reports a net error, the response has the status.
      const last = mainResponse as Response | null;
      if (last && /ERR_HTTP_RESPONSE_CODE_FAILURE/.test(String(err))) return bare(last);
      throw navigationError(err, () => proxy?.tunnelFailure(authorityOf(url)) ?? null);
    }
    if (!response) throw renderFailed('the navigation produced no response');
    const headers = await response.allHeaders();
    checkProxyMarkers(headers);
    await this.settle(page, deadline);
    const contentType = headers['content-type'] ?? null;
    const html = contentType === null || isHtmlContentType(contentType);
    const body = html ? Buffer.from(await page.content(), 'utf8') : await response.body();
    checkSize(body, settings, response.status(), html);
    return {
      status: response.status(),
      finalUrl: response.url(),
      redirects: redirectsOf(response),
      headers: keptHeaders(headers),
      contentType,
      body,
      rendered: html,
    };
  }

  /**
   * Renders a document fetched already: its main-frame request is answered with `document`, and
   * any later navigation of the main frame (a script's `location = ...`, a meta refresh) is
   * refused, so the DOM read is this document's. Such a navigation is a redirect the browser would
   * follow past robots.txt and the target host's politeness: its target (GET only, not the page
   * itself) is returned in `navigations`, to be crawled as a link of the page.
   */
  private async visitFetched(
    context: BrowserContext,
    document: FetchedPage,
    settings: FetchSettings,
    deadline: number,
    proxy: GuardProxy | null,
  ): Promise<FetchedPage> {
    await giveCookies(context, document);
    const page = await context.newPage();
    let answered = false;
    const navigations = new Set<string>();
    await page.route('**/*', async (route) => {
      const request = route.request();
      if (!request.isNavigationRequest() || request.frame() !== page.mainFrame()) return route.fallback();
      if (answered) {
        // Where the page's script or meta refresh meant to go: a link of the page. A form's POST is
        // not one (its body is gone), nor the page itself (a reload).
        if (request.method() === 'GET' && navigations.size < MAX_NAVIGATIONS) navigations.add(request.url());
        // A navigation answered 204 No Content does not happen: the page stays as it is (an
        // aborted one would put Chromium's error page in its place, or leave the load waiting).
        return route.fulfill({ status: 204 });
      }
      answered = true;
      return route.fulfill({
        status: document.status,
        headers: replayedHeaders(document),
        body: document.body,
      });
    });
    try {
      // Waiting for the load event through goto would hang on a page whose script navigates while
      // it is parsed (the refused navigation leaves Playwright waiting for a load that is not its):
      // the document's own readyState says when it has loaded.
      await page.goto(document.finalUrl, { waitUntil: 'commit', timeout: remaining(deadline) });
      await page.waitForFunction('document.readyState === "complete"', undefined, {
        polling: 50,
        timeout: remaining(deadline),
      });
    } catch (err) {
      throw navigationError(err, () => proxy?.tunnelFailure(authorityOf(document.finalUrl)) ?? null);
    }
    await this.settle(page, deadline);
    const body = Buffer.from(await page.content(), 'utf8');
    checkSize(body, settings, document.status, true);
    await keepBrowserCookies(context, document);
    return {
      status: document.status,
      finalUrl: document.finalUrl,
      redirects: document.redirects,
      headers: document.headers,
      contentType: document.contentType,
      body,
      rendered: true,
      navigations: [...navigations].filter(
        (target) => withoutFragment(target) !== withoutFragment(document.finalUrl),
      ),
    };
  }

  /** The network may never settle (polling, streaming): then the DOM is taken as it is at the cap. */
  private async settle(page: Page, deadline: number): Promise<void> {
    await page
      .waitForLoadState('networkidle', { timeout: Math.min(this.options.idleTimeoutMs, remaining(deadline)) })
      .catch(() => undefined);
  }

  /** Closes the browser and the guard proxy. Safe to call twice. */
  async close(): Promise<void> {
    await this.options.host.close();
    const proxy = this.proxy;
    this.proxy = null;
    await proxy?.then((p) => p.close()).catch(() => undefined);
  }
}

/**
 * The cookies the document's fetch was given (its redirects' included) go to the browser, as if it
 * had fetched the document itself: the page's scripts and requests see them. One the browser
 * refuses (`SameSite=None` without `Secure`, say) is left out, as the browser would leave it.
 */
async function giveCookies(context: BrowserContext, document: FetchedPage): Promise<void> {
  const cookies = (await document.cookies?.forBrowser()) ?? [];
  if (cookies.length === 0) return;
  try {
    await context.addCookies(cookies);
  } catch {
    for (const cookie of cookies) await context.addCookies([cookie]).catch(() => undefined);
  }
}

/**
 * A run that keeps a session learns what the browser holds at the end of the page (what its scripts
 * set with `document.cookie`, what its own requests were set), as a browser carries them to the
 * site's next page. Never a failure of the render: the cookies are left as they were.
 */
async function keepBrowserCookies(context: BrowserContext, document: FetchedPage): Promise<void> {
  if (!document.cookies?.session) return;
  try {
    await document.cookies.absorb(await context.cookies());
  } catch {
    // The page is rendered; its session goes on without what the browser added.
  }
}

function checkSize(body: Buffer, settings: FetchSettings, status: number, html: boolean): void {
  if (body.length <= settings.maxBodyBytes) return;
  throw new FetchError(
    'BODY_TOO_LARGE',
    `${html ? 'rendered page' : 'body'} of ${body.length} bytes, over the ${settings.maxBodyBytes}-byte cap`,
    { status },
  );
}

/**
 * The headers the browser is given with a fetched document: its type and language. The body is
 * decoded already, so its coding and length no longer apply.
 */
function replayedHeaders(document: FetchedPage): Record<string, string> {
  const headers: Record<string, string> = {};
  if (document.contentType !== null) headers['content-type'] = document.contentType;
  const language = document.headers['content-language'];
  if (language !== undefined) headers['content-language'] = language;
  return headers;
}

/** A response without a page: its status and headers, no body. */
async function bare(response: Response): Promise<FetchedPage> {
  const headers = await response.allHeaders();
  checkProxyMarkers(headers);
  return {
    status: response.status(),
    finalUrl: response.url(),
    redirects: redirectsOf(response),
    headers: keptHeaders(headers),
    contentType: headers['content-type'] ?? null,
    body: Buffer.alloc(0),
  };
}

function redirectsOf(response: Response): string[] {
  const chain: string[] = [];
  for (let request: Request | null = response.request(); request; request = request.redirectedFrom()) {
    chain.unshift(request.url());
  }
  return chain.slice(1);
}

function authorityOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'https:' ? '443' : '80')}`;
}

/** The guard proxy's own answers, recognised by their marker headers (servers never send them). */
function checkProxyMarkers(headers: Record<string, string>): void {
  const blocked = headers[BLOCKED_HEADER];
  if (blocked !== undefined) {
    throw new FetchError('ADDRESS_BLOCKED', `refused to connect: ${decodeURIComponent(blocked)}`);
  }
  const failed = headers[FAILED_HEADER];
  if (failed !== undefined)
    throw navigationError(new Error(`net::${netName(failed)} (${failed})`), () => null);
}

/** A socket error code from the proxy, in Chromium's words, so one table maps both. */
function netName(code: string): string {
  switch (code) {
    case 'ENOTFOUND':
      return 'ERR_NAME_NOT_RESOLVED';
    case 'EAI_AGAIN':
      return 'ERR_NAME_RESOLUTION_FAILED';
    case 'ECONNREFUSED':
      return 'ERR_CONNECTION_REFUSED';
    case 'ETIMEDOUT':
      return 'ERR_CONNECTION_TIMED_OUT';
    case 'EHOSTUNREACH':
      return 'ERR_ADDRESS_UNREACHABLE';
    default:
      return 'ERR_CONNECTION_RESET';
  }
}
