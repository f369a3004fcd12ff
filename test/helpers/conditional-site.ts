import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the site saw it: the path and the validators it came with. */
export interface SiteRequest {
  path: string;
  ifNoneMatch: string | null;
  ifModifiedSince: string | null;
  status: number;
}

/**
 * A site that honours conditional requests (RFC 9110 §13): every page has an ETag and a
 * Last-Modified that change when the page is `change`d; `If-None-Match` (when sent, it decides,
 * as §13.2.2 says) or else `If-Modified-Since` get a 304 for an unchanged page. It logs every
 * request with the validators it carried.
 */
export interface ConditionalSite {
  url: string;
  readonly requests: SiteRequest[];
  /** A new version of the page: new body, ETag and Last-Modified. */
  change(path: string): void;
  /** Requests of `path` (all of them, or only those with / without validators). */
  count(filter?: { path?: string; conditional?: boolean; status?: number }): number;
  close(): Promise<void>;
}

/** `pages`: path → the paths it links to. Every page is HTML. */
export async function startConditionalSite(pages: Record<string, string[]>): Promise<ConditionalSite> {
  const versions = new Map<string, number>(Object.keys(pages).map((p) => [p, 1]));
  // Whole seconds, as HTTP dates have them; each change moves a page a minute on.
  const base = Math.floor(Date.UTC(2026, 0, 1) / 1000) * 1000;
  const modifiedAt = (path: string): number => base + ((versions.get(path) ?? 1) - 1) * 60_000;
  const etagOf = (path: string): string => `"${path.replaceAll('/', '_')}-v${versions.get(path) ?? 1}"`;
  const requests: SiteRequest[] = [];

  const notModified = (req: IncomingMessage, path: string): boolean => {
    const inm = req.headers['if-none-match'];
    if (inm !== undefined) {
      return inm
        .split(',')
        .map((t) => t.trim().replace(/^W\//, ''))
        .includes(etagOf(path));
    }
    const ims = req.headers['if-modified-since'];
    if (ims === undefined) return false;
    const since = Date.parse(ims);
    return Number.isFinite(since) && modifiedAt(path) <= since;
  };

  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://site.test').pathname;
    const links = pages[path];
    const log = (status: number): void => {
      requests.push({
        path,
        ifNoneMatch: req.headers['if-none-match'] ?? null,
        ifModifiedSince: req.headers['if-modified-since'] ?? null,
        status,
      });
    };
    if (links === undefined) {
      log(404);
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    const validators = {
      etag: etagOf(path),
      'last-modified': new Date(modifiedAt(path)).toUTCString(),
    };
    if (notModified(req, path)) {
      log(304);
      res.writeHead(304, validators);
      res.end();
      return;
    }
    log(200);
    const body = links.map((l) => `<a href="${l}">${l}</a>`).join(' ');
    res.writeHead(200, { ...validators, 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><body><p>${path} v${versions.get(path)}</p>${body}</body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requests,
    change: (path) => versions.set(path, (versions.get(path) ?? 1) + 1),
    count: (filter = {}) =>
      requests.filter(
        (r) =>
          (filter.path === undefined || r.path === filter.path) &&
          (filter.status === undefined || r.status === filter.status) &&
          (filter.conditional === undefined ||
            (r.ifNoneMatch !== null || r.ifModifiedSince !== null) === filter.conditional),
      ).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
