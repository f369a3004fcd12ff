import { createHash } from 'node:crypto';
import type { OutcomeHeader, WireFailure, WireTask } from '../../../shared/protocol/messages.js';
import { encodeOutcomeFrame } from '../../../shared/protocol/outcome-frame.js';
import { PAGE_RECORD_SCHEMA, type PageRecord } from '../../../shared/protocol/page-record.js';
import { isHtmlContentType } from '../parse/content-type.js';
import { extractLinks } from '../parse/link-extractor.js';
import type { FetchedPage, Fetcher } from '../fetch/fetcher.js';
import { statusFailure } from '../fetch/fetcher.js';
import { FetchError, toFetchError } from '../fetch/fetch-error.js';
import { encodeBody } from './body-encoding.js';
import { NOT_A_PAGE } from '../render/codes.js';

export interface ProcessContext {
  fetcher: Fetcher;
  /** Renders a page in a browser; present in render-capable crawlers only. */
  render?: (url: string) => Promise<FetchedPage>;
  crawlerId: string;
  clock?: () => number;
}

const RENDERED_TYPE = 'text/html; charset=utf-8';

/**
 * The page as the task asks for it: rendered in a browser, or fetched. A render target that turns
 * out to be a download is fetched instead.
 */
async function obtain(task: WireTask, ctx: ProcessContext): Promise<FetchedPage> {
  if (!task.render) return ctx.fetcher.fetch(task.url);
  if (!ctx.render) {
    throw new FetchError('RENDER_UNAVAILABLE', 'this crawler cannot render pages (start it with --render)', {
      retriable: true,
    });
  }
  try {
    return await ctx.render(task.url);
  } catch (err) {
    if (err instanceof FetchError && err.code === NOT_A_PAGE) return ctx.fetcher.fetch(task.url);
    throw err;
  }
}

/**
 * One task, start to finish: fetch, extract links from HTML, build the page record, and encode the
 * outcome frame for the scheduler. Never throws: every failure becomes a failed record with a code.
 */
export async function processTask(task: WireTask, ctx: ProcessContext): Promise<Buffer> {
  const clock = ctx.clock ?? Date.now;
  const started = clock();
  const fetchedAt = new Date(started).toISOString();
  let page: FetchedPage | null = null;
  let failure: FetchError | null = null;
  try {
    page = await obtain(task, ctx);
    failure = statusFailure(page);
  } catch (err) {
    failure = toFetchError(err);
  }
  const base = {
    schema: PAGE_RECORD_SCHEMA,
    url: task.url,
    depth: task.depth,
    parentUrl: task.parentUrl,
    fetchedAt,
    attempt: task.attempt,
    crawlerId: ctx.crawlerId,
  } as const;
  let links: string[] = [];
  let follow: string[] = [];
  let nofollow = false;
  // Decoded once: the same text is parsed for links and stored in the record. A rendered DOM is
  // UTF-8 whatever charset the server's bytes were in.
  const body = page ? encodeBody(page.body, page.rendered ? RENDERED_TYPE : page.contentType) : null;
  if (page && body && !failure && (page.rendered || isHtmlContentType(page.contentType))) {
    try {
      // Undecodable charsets are stored as base64; links are ASCII, so latin1 reads them fine.
      const text = body.encoding === 'utf8' ? body.body : page.body.toString('latin1');
      const extracted = extractLinks(text, page.finalUrl);
      links = extracted.links;
      follow = extracted.follow;
      nofollow = extracted.metaNofollow;
    } catch (err) {
      failure = new FetchError('PARSE_FAILED', `link extraction failed: ${String(err)}`, {
        retriable: false,
      });
    }
  }
  const followSet = new Set(follow);
  const nofollowLinks = nofollow ? [] : links.filter((l) => !followSet.has(l));
  const record: PageRecord = {
    ...base,
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
    ...(page?.rendered ? { rendered: true } : {}),
  };
  const wireFailure: WireFailure | null = failure
    ? {
        code: failure.code,
        message: failure.message,
        retriable: failure.retriable,
        status: failure.httpStatus,
        retryAfterMs: failure.retryAfterMs,
      }
    : null;
  const header: OutcomeHeader = {
    type: 'outcome',
    taskId: task.taskId,
    outcome: record.outcome,
    failure: wireFailure,
    links: failure ? [] : follow,
  };
  return encodeOutcomeFrame(header, Buffer.from(JSON.stringify(record)));
}
