import type { FetchSettings } from './messages.js';

/**
 * How much one WebSocket message may weigh, on both sides of the crawler endpoint.
 *
 * Before its hello is accepted a session may send at most PRE_HELLO_MAX_BYTES in all (a hello is a
 * few hundred bytes); past that it is closed, having cost the scheduler one socket read or two.
 *
 * After it, one message is at most `outcomeFrameLimit(fetch)`: the base64 form of the largest body
 * a crawler may fetch (a page's `maxBodyBytes` or a sitemap's `sitemapMaxBytes`), plus a fixed
 * budget for everything else in the frame (links twice — the header's followable ones and the
 * record's — sitemap entries, headers, redirects). With the default limits the budget holds a
 * page's 5,000 links of 2,048 characters twice (20 MB) or a 50,000-URL sitemap of 200-character
 * URLs (22 MB). A crawler keeps its frames under the limit: a text body whose JSON form would not
 * fit goes as base64 (4/3 of its bytes, never more), and an outcome that still does not fit is
 * sent as a final RECORD_TOO_LARGE failure (client/crawler/page/fit-frame.ts).
 *
 * The older rule, six times the largest body (JSON escapes a control character as `\u0000`),
 * allowed 384 MiB per message with the default limits; this one allows 99 MiB.
 */
export const PRE_HELLO_MAX_BYTES = 64 * 1024;

/** Room in an outcome frame for what is not the body. */
export const FRAME_METADATA_BUDGET_BYTES = 32 * 1024 * 1024;

/** The largest text (JSON) message a crawler sends: a robots.txt answer of 500 KiB, escaped. */
export const MAX_TEXT_MESSAGE_BYTES = 4 * 1024 * 1024;

const DEFAULT_SITEMAP_MAX_BYTES = 50 * 1024 * 1024;

/** Bytes of the base64 form of `bytes` bytes. */
export function base64Length(bytes: number): number {
  return Math.ceil(bytes / 3) * 4;
}

/** The largest message a crawler may send once its hello is accepted (see above). */
export function outcomeFrameLimit(fetch: Pick<FetchSettings, 'maxBodyBytes' | 'sitemapMaxBytes'>): number {
  const body = Math.max(fetch.maxBodyBytes, fetch.sitemapMaxBytes ?? DEFAULT_SITEMAP_MAX_BYTES);
  return base64Length(body) + FRAME_METADATA_BUDGET_BYTES;
}
