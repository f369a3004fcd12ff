import { createHash } from 'node:crypto';
import type {
  OutcomeHeader,
  SitemapEntry,
  WireFailure,
  WireTask,
} from '../../../shared/protocol/messages.js';
import { encodeOutcomeFrame } from '../../../shared/protocol/outcome-frame.js';
import { fitOutcomeFrame } from './fit-frame.js';
import { PAGE_RECORD_SCHEMA, type PageRecord } from '../../../shared/protocol/page-record.js';
import { DEFAULT_MAX_LINKS_PER_PAGE, DEFAULT_MAX_URL_LENGTH } from '../../../shared/protocol/link-limits.js';
import { extractLinks, type ExtractedLinks } from '../parse/link-extractor.js';
import { withNavigations } from './navigation-links.js';
import type { FetchedPage, FetchHooks } from '../fetch/fetcher.js';
import { statusFailure } from '../fetch/fetcher.js';
import { movedTo } from '../fetch/redirect-target.js';
import type { HopAnswer } from '../fetch/redirect-spacing.js';
import { FetchError, toFetchError } from '../fetch/fetch-error.js';
import { RoutedFetchError, type FetchVia } from '../fetch/routed-fetcher.js';
import { encodeBody } from '../../../shared/text/body-encoding.js';
import { captureOf } from './capture.js';
import { isHtmlMediaType, mediaTypeOf, type MediaType } from '../../../shared/text/media-type.js';
import { readSitemap, type SitemapLimits } from '../sitemap/read-sitemap.js';
import { notModifiedFrame } from '../recrawl/not-modified.js';
import { conditionalHeaders, recrawlValidators, responseValidators } from '../recrawl/validators.js';

/** The soft link limits of the crawl (`FetchSettings`); the defaults apply to those not given. */
export interface LinkLimits {
  maxUrlLength?: number | undefined;
  maxLinksPerPage?: number | undefined;
}

export interface ProcessContext {
  /** Told when the task's outcome is a failure (the crawler counts them for its agent). */
  onFailure?: () => void;
  /**
   * Fetches with the job's identity and route (a RoutedFetcher: User-Agent, proxy); what it says
   * in `via` goes into the record.
   */
  fetcher: {
    fetch(url: string, hooks?: FetchHooks): Promise<FetchedPage & { via?: FetchVia }>;
  };
  /** Aborted when the task is withdrawn (its scheduler connection ended): the fetch stops. */
  signal?: AbortSignal;
  /**
   * Renders a page in a browser (given the task's `signal`, as fetches are); render-capable
   * crawlers only. `document` is the page's main document, fetched already: the browser renders it
   * without requesting it again; `spentMs`, how long that fetch took, is spent of the page's total
   * time.
   */
  render?: (
    url: string,
    signal?: AbortSignal,
    document?: FetchedPage,
    spentMs?: number,
  ) => Promise<FetchedPage>;
  /** The request went out (for tasks whose scheduler asked for `reportStart`). */
  onRequestSent?: () => void;
  /** The scheduler's answer to a redirect back to the task's host (tasks with `hopGrants`). */
  awaitHop?: (url: string) => Promise<HopAnswer>;
  crawlerId: string;
  clock?: () => number;
  linkLimits?: LinkLimits;
  /** The crawl's charset for pages that name none and are not UTF-8 (`FetchSettings.defaultCharset`). */
  defaultCharset?: string | undefined;
  /** Limits for `sitemap` tasks (defaults: 50,000 entries, 50 MiB). */
  sitemap?: SitemapLimits;
  /** The largest frame the scheduler takes (`outcomeFrameLimit`); the outcome is fitted to it. */
  maxFrameBytes?: number;
}

const RENDERED_TYPE = 'text/html; charset=utf-8';
const RENDERED_MEDIA: MediaType = { essence: 'text/html', sniffed: false };

/**
 * The page as the task asks for it: fetched, or fetched and then rendered in a browser. A render
 * task's document is fetched as any page is, so its redirects pass the same checks (robots.txt,
 * the host's politeness, another host queued as a link); the browser is handed the document and
 * fetches only what the page loads. What is not an HTML page (a download, a redirect the fetch
 * stopped at, an empty answer, a recrawl's 304) is recorded as fetched.
 */
async function obtain(task: WireTask, ctx: ProcessContext): Promise<FetchedPage & { via?: FetchVia }> {
  const conditional = conditionalHeaders(task);
  const hooks = {
    ...(ctx.onRequestSent ? { onRequestSent: ctx.onRequestSent } : {}),
    // Redirects back to the task's host wait for the scheduler's grant (redirect-spacing.ts).
    ...(ctx.awaitHop ? { awaitHop: ctx.awaitHop } : {}),
    ...(stopsAtOtherHosts(task) ? { stayOnHost: true } : {}),
    // A sitemap may be larger than a page: its own cap (its entries are read up to their limits).
    ...(task.kind === 'sitemap' ? { maxBodyBytes: sitemapLimitsOf(ctx).maxBytes } : {}),
    // The last attempt was reset: the server resets this URL, so one request for this attempt.
    ...(task.lastErrorCode === 'CONNECTION_RESET' ? { resendOnStaleSocket: false } : {}),
    // A recrawl: the last capture's validators (docs/recrawl.md).
    ...(conditional ? { headers: conditional } : {}),
    // The host's session, when the run keeps one.
    ...(task.cookies ? { cookies: task.cookies } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  };
  if (!task.render) return ctx.fetcher.fetch(task.url, hooks);
  const render = ctx.render;
  if (!render) {
    throw new FetchError('RENDER_UNAVAILABLE', 'this crawler cannot render pages (start it with --render)');
  }
  const clock = ctx.clock ?? Date.now;
  const fetchStarted = clock();
  const document = await ctx.fetcher.fetch(task.url, hooks);
  if (!rendersAsPage(document)) return document;
  const rendered = await render(document.finalUrl, ctx.signal, document, clock() - fetchStarted);
  return {
    ...rendered,
    ...(document.via ? { via: document.via } : {}),
    // The session learns what the document's responses and the browser set (keepBrowserCookies).
    ...(document.cookies ? { cookies: document.cookies } : {}),
  };
}

/** A fetched answer the browser should render: a page of HTML (an error page included), not empty. */
function rendersAsPage(page: FetchedPage): boolean {
  if (page.status >= 300 && page.status < 400) return false;
  if (page.body.length === 0) return false;
  return isHtmlMediaType(mediaTypeOf(page.contentType, page.body).essence);
}

/**
 * Whether the task's redirects to another host end its fetch, the target queued as a link (through
 * the crawl's scope, dedup, robots.txt and that host's politeness: redirect-target.ts). Every page
 * but one the user gave (no parent): a seed names the site the user asked for, and
 * `http://example.com/` answering with `https://www.example.com/` is how most sites greet their
 * bare name, so a seed follows it in its task. Sitemaps follow every redirect.
 */
function stopsAtOtherHosts(task: WireTask): boolean {
  return task.kind !== 'sitemap' && task.parentUrl !== null;
}

export const DEFAULT_SITEMAP_LIMITS: SitemapLimits = { maxUrls: 50_000, maxBytes: 50 * 1024 * 1024 };

const sitemapLimitsOf = (ctx: ProcessContext): SitemapLimits => ctx.sitemap ?? DEFAULT_SITEMAP_LIMITS;

/**
 * One task, start to finish: fetch, decode, extract links from HTML and XHTML, build the page record,
 * and encode the outcome frame for the scheduler. Never throws: every failure becomes a failed record
 * with a code.
 *
 * The body is decoded once, from the charset the WHATWG sniffing algorithm finds (BOM, header,
 * `<meta>`, default), and that text is both parsed and stored. Other types (PDF, images, JSON, ...)
 * are stored as they came and never parsed for links; a response without a usable Content-Type is
 * typed by sniffing its first bytes.
 */
export async function processTask(task: WireTask, ctx: ProcessContext): Promise<Buffer> {
  const clock = ctx.clock ?? Date.now;
  const started = clock();
  const fetchedAt = new Date(started).toISOString();
  let page: FetchedPage | null = null;
  let failure: FetchError | null = null;
  let via: FetchVia | null = null;
  /** Where the page redirects to when the fetch stopped there (queued as its one link), or null. */
  let moved: string | null = null;
  try {
    const obtained = await obtain(task, ctx);
    page = obtained;
    via = obtained.via ?? null;
    const validators = recrawlValidators(task);
    if (obtained.status === 304 && validators) {
      const durationMs = clock() - started;
      return notModifiedFrame({
        task,
        validators,
        page,
        via,
        crawlerId: ctx.crawlerId,
        fetchedAt,
        durationMs,
      });
    }
    moved = task.kind !== 'sitemap' && obtained.rendered !== true ? movedTo(obtained) : null;
    if (moved === null) failure = statusFailure(obtained);
  } catch (err) {
    failure = toFetchError(err);
    if (err instanceof RoutedFetchError) via = err.via;
  }
  const rendered = page?.rendered === true;
  // A rendered DOM is HTML in UTF-8 whatever the server sent; a fetched body is what it says, or
  // what its first bytes show.
  const media = page === null ? null : rendered ? RENDERED_MEDIA : mediaTypeOf(page.contentType, page.body);
  // Decoded once: the same text is parsed for links and stored in the record.
  const body =
    page && media
      ? encodeBody(page.body, rendered ? RENDERED_TYPE : page.contentType, media.essence, ctx.defaultCharset)
      : null;
  const maxUrlLength = ctx.linkLimits?.maxUrlLength ?? DEFAULT_MAX_URL_LENGTH;
  const maxLinks = ctx.linkLimits?.maxLinksPerPage ?? DEFAULT_MAX_LINKS_PER_PAGE;
  let extracted: ExtractedLinks | null = null;
  let navigationUrl: string | null = null;
  let entries: SitemapEntry[] | undefined;
  if (page && !failure && task.kind === 'sitemap') {
    // A sitemap's links are its entries: pages and further sitemaps, each with its lastmod.
    try {
      entries = (await readSitemap(page.body, page.finalUrl, sitemapLimitsOf(ctx))).entries;
    } catch (err) {
      failure = toFetchError(err);
    }
  } else if (page && body && media && !failure && moved === null && isHtmlMediaType(media.essence)) {
    try {
      // Only a `replacement`-encoded page is left undecoded; its links are ASCII, which latin1 reads.
      const text = body.encoding === 'utf8' ? body.body : page.body.toString('latin1');
      extracted = extractLinks(text, page.finalUrl, {
        encoding: body.charset?.name ?? 'UTF-8',
        maxUrlLength,
        maxLinks,
        xml: media.essence === 'application/xhtml+xml',
      });
      if (page.navigations && page.navigations.length > 0) {
        const withTargets = withNavigations(extracted, page.navigations, page.finalUrl, {
          maxUrlLength,
          maxLinks,
        });
        extracted = withTargets;
        navigationUrl = withTargets.navigationUrl;
      }
    } catch (err) {
      failure = new FetchError('PARSE_FAILED', `link extraction failed: ${String(err)}`);
    }
  }
  // A redirect's one link is its target, within the crawl's URL length as a page's links are.
  const movedLinks = moved === null || moved.length > maxUrlLength ? [] : [moved];
  const links = entries
    ? [...new Set(entries.map((e) => e.url))]
    : moved !== null
      ? movedLinks
      : (extracted?.links ?? []);
  const follow = entries || moved !== null ? links : (extracted?.follow ?? []);
  const nofollow = extracted?.metaNofollow ?? false;
  const followSet = new Set(follow);
  const nofollowLinks = nofollow ? [] : links.filter((l) => !followSet.has(l));
  const capture = captureOf(task);
  // One literal, no spread: on Node 20 each property written after a spread in an object literal
  // costs about half a microsecond (V8 defines it through the runtime), and this literal has 35.
  // A key whose value is undefined is left out of the record's JSON, as the spreads left it out.
  const record: PageRecord = {
    schema: PAGE_RECORD_SCHEMA,
    jobId: capture.jobId,
    runId: capture.runId,
    captureId: capture.captureId,
    url: task.url,
    depth: task.depth,
    parentUrl: task.parentUrl,
    fetchedAt,
    attempt: task.attempt,
    crawlerId: ctx.crawlerId,
    finalUrl: page?.finalUrl ?? null,
    status: page?.status ?? failure?.httpStatus ?? null,
    outcome: failure ? 'failed' : 'ok',
    error: failure ? { code: failure.code, message: failure.message } : null,
    contentType: page?.contentType ?? null,
    links,
    nofollowLinks,
    nofollow,
    redirects: page?.redirects ?? [],
    headers: page?.headers ?? {},
    durationMs: clock() - started,
    bodyBytes: page?.body.length ?? 0,
    bodySha256: page ? createHash('sha256').update(page.body).digest('hex') : null,
    bodyEncoding: body?.encoding ?? null,
    body: body?.body ?? null,
    rendered: rendered ? true : undefined,
    // The browser decoded a rendered page; which charset it chose is not known here.
    charset: rendered ? null : (body?.charset ?? null),
    sniffedContentType: media?.sniffed === true ? media.essence : null,
    canonicalUrl: extracted?.canonicalUrl ?? null,
    refreshUrl: extracted?.refreshUrl ?? null,
    navigationUrl: navigationUrl ?? undefined,
    linksDropped: extracted?.dropped ?? {
      tooLong: moved !== null && movedLinks.length === 0 ? 1 : 0,
      overLimit: 0,
    },
    userAgent: via ? via.userAgent : undefined,
    proxy: via?.proxy ? via.proxy : undefined,
    lastmod: task.lastmod ? task.lastmod : undefined,
  };
  if (failure) ctx.onFailure?.();
  const wireFailure: WireFailure | null = failure
    ? {
        code: failure.code,
        message: failure.message,
        retriable: failure.retriable,
        status: failure.httpStatus,
        retryAfterMs: failure.retryAfterMs,
      }
    : null;
  // What the next run of the job may send back (fetched pages only: see conditionalHeaders).
  const validators =
    page && !failure && moved === null && !rendered && task.kind !== 'sitemap'
      ? responseValidators(page.headers)
      : undefined;
  const header: OutcomeHeader = {
    type: 'outcome',
    taskId: task.taskId,
    outcome: record.outcome,
    failure: wireFailure,
    links: failure ? [] : follow,
    // What the scheduler's politeness learns from: the status and how long the server took.
    status: record.status,
    fetchMs: record.durationMs,
    ...(entries && !failure ? { entries } : {}),
    ...(validators ? { validators } : {}),
    // A session's cookies go back only when a response changed them.
    ...(task.cookies && page?.cookies?.changed ? { cookies: await page.cookies.toWire() } : {}),
  };
  if (ctx.maxFrameBytes !== undefined)
    return fitOutcomeFrame(header, record, page?.body ?? null, ctx.maxFrameBytes);
  return encodeOutcomeFrame(header, JSON.stringify(record));
}
