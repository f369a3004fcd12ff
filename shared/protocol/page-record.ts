import { z } from 'zod';

/**
 * Version tag written into every page record; bump on any incompatible change (docs/page-record.md).
 * `/2`: `links` and `nofollowLinks` may be null, moved to the blob store with `linksRef`.
 * `/3`: every record names its `jobId`, `runId` and `captureId` (many crawls share one stream).
 * `/4`: `outcome` may be `not-modified` (a recrawl's conditional request got a 304): no body, and
 *       `previousCaptureId` names the earlier capture whose body still holds (docs/recrawl.md).
 */
export const PAGE_RECORD_SCHEMA = 'ackcrawl.page/4';

/** The job of records whose crawl is not one of the master's jobs (`ackcrawl crawl`, `POST /crawl`). */
export const DEFAULT_JOB_ID = 'default';

export const recordErrorSchema = z.object({ code: z.string(), message: z.string() });
export type RecordError = z.infer<typeof recordErrorSchema>;

/**
 * Where a body too large to ride in its record went (the claim check): the blob holds the bytes of
 * `body` as `bodyEncoding` says (UTF-8 text, or the raw bytes for base64), `sha256` is their hash.
 */
export const bodyRefSchema = z.object({
  store: z.enum(['s3', 'file']),
  bucket: z.string(),
  key: z.string(),
  sha256: z.string(),
  bytes: z.number().int().nonnegative(),
});
export type BodyRef = z.infer<typeof bodyRefSchema>;

/**
 * Where link lists too large to ride in their record went (the claim check, schema `/2`): the blob
 * is the JSON object `{"links": [...], "nofollowLinks": [...]}` in UTF-8, `sha256` its hash; the
 * record keeps how many of each there are, and `links`/`nofollowLinks` are null.
 */
export const linksRefSchema = z.object({
  store: z.enum(['s3', 'file']),
  bucket: z.string(),
  key: z.string(),
  sha256: z.string(),
  bytes: z.number().int().nonnegative(),
  /** How many entries the blob's `links` has. */
  links: z.number().int().nonnegative(),
  /** How many entries the blob's `nofollowLinks` has. */
  nofollowLinks: z.number().int().nonnegative(),
});
export type LinksRef = z.infer<typeof linksRefSchema>;

/** What a `linksRef` blob holds. */
export const linksBlobSchema = z.object({
  links: z.array(z.string()),
  nofollowLinks: z.array(z.string()),
});
export type LinksBlob = z.infer<typeof linksBlobSchema>;

/** Which character encoding a text body was decoded from, and what said so (docs/page-record.md). */
export const charsetSchema = z.object({
  /** WHATWG Encoding Standard name: `UTF-8`, `GBK`, `gb18030`, `Big5`, `Shift_JIS`, `EUC-KR`, ... */
  name: z.string(),
  source: z.enum(['bom', 'header', 'meta', 'xml', 'default']),
});
export type RecordCharset = z.infer<typeof charsetSchema>;

/** Links a page had beyond the crawl's soft limits, counted once per distinct link. */
export const linksDroppedSchema = z.object({
  /** Longer than the crawl's `maxUrlLength` once normalised. */
  tooLong: z.number().int().nonnegative(),
  /** Beyond the crawl's `maxLinksPerPage` distinct links. */
  overLimit: z.number().int().nonnegative(),
});

/**
 * One page outcome, final: a fetched page (`ok`) or a final failure (`failed`). Retried attempts are
 * not recorded; each accepted URL ends as exactly one record (duplicates only after a crash).
 */
export const storedPageRecordSchema = z.object({
  schema: z.literal(PAGE_RECORD_SCHEMA),
  /** The job whose run fetched it (`default` for a crawl that is not a master job). */
  jobId: z.string(),
  /** The run (one execution of the job) it belongs to (`default` for the scheduler's single crawl). */
  runId: z.string(),
  /**
   * A unique id of this fetch (a UUID per dispatched attempt): it joins the record, its blobs in the
   * blob store (their keys contain it) and its SQL rows. A record the scheduler writes without a
   * fetch (robots.txt denial) has its own.
   */
  captureId: z.string(),
  url: z.string(),
  finalUrl: z.string().nullable(),
  status: z.number().int().nullable(),
  /**
   * `ok`: fetched; `failed`: a final failure; `not-modified` (`/4`): the server answered 304 to the
   * validators of `previousCaptureId`, so that capture's body is still the page's (this record has
   * none: `body` null, `bodyBytes` 0, no links).
   */
  outcome: z.enum(['ok', 'failed', 'not-modified']),
  error: recordErrorSchema.nullable(),
  contentType: z.string().nullable(),
  depth: z.number().int().nonnegative(),
  parentUrl: z.string().nullable(),
  /** Null only when the list was moved to the blob store: see `linksRef`. */
  links: z.array(z.string()).nullable(),
  /** Links marked rel=nofollow (a subset of `links`), not followed; null as `links` is. */
  nofollowLinks: z.array(z.string()).nullable(),
  /** `<meta name=robots content=nofollow>`: no link of this page is followed. */
  nofollow: z.boolean(),
  redirects: z.array(z.string()),
  headers: z.record(z.string(), z.string()),
  fetchedAt: z.string(),
  durationMs: z.number().nonnegative(),
  attempt: z.number().int().positive(),
  crawlerId: z.string(),
  bodyBytes: z.number().int().nonnegative(),
  bodySha256: z.string().nullable(),
  bodyEncoding: z.enum(['utf8', 'base64']).nullable(),
  body: z.string().nullable(),
  /** Set when `body` was moved to a blob store (absent in records that keep bodies inline). */
  bodyRef: bodyRefSchema.nullable().optional(),
  /** Set when `links` and `nofollowLinks` were moved to a blob store (absent when they are inline). */
  linksRef: linksRefSchema.optional(),
  /**
   * True when the page was rendered in a browser: `body` is the DOM serialised after its scripts
   * ran and the network settled, and `links` come from it. Absent in fetched records.
   */
  rendered: z.boolean().optional(),
  // Added within ackcrawl.page/1; optional, so records written before them match (but for `schema`).
  /** The charset `body` was decoded from; null when it is base64 or absent. */
  charset: charsetSchema.nullable().optional(),
  /** The media type sniffed from the body when `contentType` was missing or said nothing. */
  sniffedContentType: z.string().nullable().optional(),
  /** The page's `<link rel=canonical>`, absolute and normalised; recorded, not followed. */
  canonicalUrl: z.string().nullable().optional(),
  /** The target of the page's `<meta http-equiv=refresh>`, also one of `links`. */
  refreshUrl: z.string().nullable().optional(),
  /**
   * A rendered page only: where its script (or a meta refresh) navigated the browser first,
   * normalised; refused there, so `body` is this page's DOM, and also one of `links`.
   */
  navigationUrl: z.string().optional(),
  linksDropped: linksDroppedSchema.optional(),
  /** The User-Agent header the fetch sent (absent in records written before it was recorded). */
  userAgent: z.string().optional(),
  /** The proxy that carried the fetch, without credentials (`socks5://10.0.0.1:1080`); absent: direct. */
  proxy: z.string().optional(),
  /** The `<lastmod>` of the sitemap entry this URL was found in (absent when there was none). */
  lastmod: z.string().optional(),
  /**
   * `/4`, `not-modified` records only: the capture (an earlier run of the same job, with a body)
   * that the 304 confirmed. Its record, blobs and SQL rows carry this id.
   */
  previousCaptureId: z.string().optional(),
});
/** A page record as stored and read back: its link lists may have moved to the blob store. */
export type StoredPageRecord = z.infer<typeof storedPageRecordSchema>;

/**
 * A page record as crawlers and the scheduler build it, and as the file sink stores it: link lists
 * inline, no `linksRef`. Only the Kafka sink's claim check turns one into a record with references.
 */
export const pageRecordSchema = storedPageRecordSchema.omit({ linksRef: true }).extend({
  links: z.array(z.string()),
  nofollowLinks: z.array(z.string()),
});
export type PageRecord = z.infer<typeof pageRecordSchema>;
