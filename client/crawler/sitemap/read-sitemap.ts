import sax from 'sax';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import type { SitemapEntry } from '../../../shared/protocol/messages.js';
import { MAX_LASTMOD_LENGTH } from '../../../shared/protocol/task.js';
import { tryNormalizeUrl } from '../../../shared/url/normalize.js';
import { FetchError } from '../fetch/fetch-error.js';

export interface SitemapLimits {
  /** Entries read at most; the rest of the file is ignored. */
  maxUrls: number;
  /** Uncompressed bytes read at most (a gzip sitemap is inflated as a stream up to this). */
  maxBytes: number;
}

export interface SitemapRead {
  entries: SitemapEntry[];
  /** True when a limit cut the file short. */
  truncated: boolean;
}

const CHUNK = 64 * 1024;

/**
 * Reads a sitemap (sitemaps.org): a `<urlset>` gives pages, a `<sitemapindex>` gives sitemaps, each
 * with its `<lastmod>`; a plain-text sitemap gives one page URL per line. gzip (by its magic bytes,
 * whatever the headers said) is inflated as a stream, and XML is parsed as a stream with sax, so
 * the limits hold without building the document. Locations are normalised (relative ones resolved
 * against the sitemap's URL); unusable ones are skipped. Not a sitemap: SITEMAP_INVALID.
 */
export async function readSitemap(body: Buffer, base: string, limits: SitemapLimits): Promise<SitemapRead> {
  const reader = new SitemapReader(base, limits.maxUrls);
  let bytes = 0;
  const feed = (chunk: Buffer): boolean => {
    const room = limits.maxBytes - bytes;
    bytes += chunk.length;
    reader.write(room < chunk.length ? chunk.subarray(0, Math.max(0, room)) : chunk);
    if (bytes > limits.maxBytes) reader.truncated = true;
    return !reader.truncated;
  };
  if (body[0] === 0x1f && body[1] === 0x8b) await inflate(body, feed);
  else for (let i = 0; i < body.length && feed(body.subarray(i, i + CHUNK)); i += CHUNK);
  return reader.end();
}

function inflate(body: Buffer, feed: (chunk: Buffer) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const gunzip = createGunzip();
    let done = false;
    const finish = (err?: unknown): void => {
      if (done) return;
      done = true;
      if (err) reject(new FetchError('SITEMAP_INVALID', `gzip sitemap: ${String(err)}`));
      else resolve();
    };
    gunzip.on('data', (chunk: Buffer) => {
      if (!done && !feed(chunk)) {
        gunzip.destroy();
        finish();
      }
    });
    gunzip.on('end', () => finish());
    gunzip.on('error', (err) => finish(err));
    gunzip.end(body);
  });
}

class SitemapReader {
  readonly entries: SitemapEntry[] = [];
  truncated = false;
  private readonly decoder = new StringDecoder('utf8');
  private mode: 'unknown' | 'xml' | 'text' = 'unknown';
  private root: 'urlset' | 'sitemapindex' | null = null;
  private readonly parser = sax.parser(false, { lowercase: true, trim: false });
  private path: string[] = [];
  private loc = '';
  private lastmod = '';
  private text = '';
  private pending = '';

  constructor(
    private readonly base: string,
    private readonly maxUrls: number,
  ) {
    const p = this.parser;
    p.onerror = () => {
      // Lenient, like browsers with feeds: carry on after malformed markup.
      p.error = null as unknown as Error;
      p.resume();
    };
    p.onopentag = (tag) => {
      const name = localName(tag.name);
      if (this.path.length === 0 && this.root === null) {
        if (name === 'urlset' || name === 'sitemapindex') this.root = name;
      }
      this.path.push(name);
      if (name === 'url' || name === 'sitemap') this.loc = this.lastmod = '';
      this.text = '';
    };
    p.ontext = (t) => (this.text += t);
    p.oncdata = (t) => (this.text += t);
    p.onclosetag = () => {
      const name = this.path.pop() ?? '';
      const parent = this.path[this.path.length - 1];
      if (name === 'loc' && (parent === 'url' || parent === 'sitemap')) this.loc = this.text;
      else if (name === 'lastmod' && (parent === 'url' || parent === 'sitemap')) this.lastmod = this.text;
      else if (
        (name === 'url' && this.root === 'urlset') ||
        (name === 'sitemap' && this.root === 'sitemapindex')
      )
        this.add(this.loc, name === 'url' ? 'page' : 'sitemap', this.lastmod);
      this.text = '';
    };
  }

  write(chunk: Buffer): void {
    if (this.truncated || chunk.length === 0) return;
    let text = this.decoder.write(chunk);
    if (this.mode === 'unknown') {
      text = text.replace(/^\uFEFF/, '');
      const first = /\S/.exec(text)?.[0];
      if (first === undefined) return;
      this.mode = first === '<' ? 'xml' : 'text';
    }
    if (this.mode === 'xml') this.parser.write(text);
    else this.lines(text);
  }

  private lines(text: string): void {
    const all = (this.pending + text).split(/\r?\n/);
    this.pending = all.pop() ?? '';
    // A text sitemap lists absolute URLs only: anything else is not a URL line.
    for (const line of all) if (/^\s*https?:\/\//i.test(line)) this.add(line, 'page', '');
  }

  private add(loc: string, kind: SitemapEntry['kind'], lastmod: string): void {
    if (this.truncated) return;
    if (this.entries.length >= this.maxUrls) {
      this.truncated = true;
      return;
    }
    const url = tryNormalizeUrl(loc.trim(), this.base);
    if (url === null) return;
    const date = lastmod.trim();
    this.entries.push({ url, kind, lastmod: date && date.length <= MAX_LASTMOD_LENGTH ? date : null });
  }

  end(): SitemapRead {
    const rest = this.decoder.end();
    if (this.mode === 'xml') {
      if (!this.truncated) this.parser.write(rest).close();
      if (this.root === null) {
        throw new FetchError('SITEMAP_INVALID', 'not a sitemap: no <urlset> or <sitemapindex> root');
      }
    } else if (this.mode === 'text' && !this.truncated) {
      this.lines(`${rest}\n`);
    }
    return { entries: this.entries, truncated: this.truncated };
  }
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon >= 0 ? name.slice(colon + 1) : name;
}
