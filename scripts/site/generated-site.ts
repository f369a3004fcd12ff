import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createPageRenderer,
  ERROR_PATH,
  pagePath,
  parsePagePath,
  parseRedirectPath,
  type SiteShape,
} from './page-renderer.js';

export interface GeneratedSiteOptions {
  pages: number;
  linksPerPage?: number;
  pageBytes?: number;
  seed?: number;
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Adds `/missing` (404) and `/error` (always 500) links to the home page, for demos. */
  brokenLinks?: boolean;
  /** Links lead through a same-host 301 (`/r/n` → `/p/n`) to every page but the home page. */
  redirectLinks?: boolean;
  /** Serve a robots.txt disallowing this path to every agent (no page is under it); else a 404. */
  disallow?: string;
  /** Answer each page this long after its request (a slow site: requests stay in flight). */
  responseDelayMs?: number;
  /**
   * Sees each page request first (tests: count requests per page, or act on one); returning true
   * means it took the request over and the site does not answer it.
   */
  intercept?: (page: number, req: IncomingMessage, res: ServerResponse) => boolean;
}

export interface SiteStats {
  /** Every request the server answered, whatever the path or status. */
  requests: number;
  /** 200 responses for site pages, counting repeats. */
  pageResponses: number;
  /** Distinct site pages served at least once. */
  distinctPages: number;
  /** 301 responses of `/r/n` paths (a site of `redirectLinks`). */
  redirects: number;
}

export interface GeneratedSite {
  url: string;
  port: number;
  stats(): SiteStats;
  resetStats(): void;
  close(): Promise<void>;
}

/**
 * A deterministic site of `pages` HTML pages for benchmarks, demos and end-to-end tests. Pages are
 * rendered on request (a few microseconds each) rather than held in memory: 20,000 pages of 10 KB
 * would be 200 MB, and a crawl reads each page once, so a cache would almost never hit.
 */
export async function startGeneratedSite(options: GeneratedSiteOptions): Promise<GeneratedSite> {
  const shape: SiteShape = {
    pages: options.pages,
    linksPerPage: options.linksPerPage ?? 20,
    pageBytes: options.pageBytes ?? 10_240,
    seed: options.seed ?? 1,
    brokenLinks: options.brokenLinks ?? false,
    redirectLinks: options.redirectLinks ?? false,
  };
  if (!Number.isInteger(shape.pages) || shape.pages < 1) throw new RangeError('pages must be an integer ≥ 1');
  const host = options.host ?? '127.0.0.1';
  const robotsTxt =
    options.disallow === undefined ? null : Buffer.from(`User-agent: *\nDisallow: ${options.disallow}\n`);
  let served = new Uint8Array(shape.pages);
  const stats: SiteStats = { requests: 0, pageResponses: 0, distinctPages: 0, redirects: 0 };

  const server = createServer();
  // Keep-alive: crawlers reuse connections between requests; do not make them reconnect every 5 s.
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host}:${port}`;
  // Absolute links name the real port, so the renderer is made once listening; no request can be
  // handled before the handler below is attached, in this same tick.
  const render = createPageRenderer(shape, origin);

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    stats.requests++;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-length': 0 }).end();
      return;
    }
    const pathname = (req.url ?? '/').split('?', 1)[0] ?? '/';
    const page = parsePagePath(pathname, shape.pages);
    if (page !== undefined && options.intercept?.(page, req, res) === true) return;
    if (page !== undefined && options.responseDelayMs) {
      const timer = setTimeout(() => servePage(page), options.responseDelayMs);
      res.once('close', () => clearTimeout(timer));
      return;
    }
    if (page !== undefined) return servePage(page);
    if (robotsTxt !== null && pathname === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': robotsTxt.length }).end(robotsTxt);
      return;
    }
    const movedTo = shape.redirectLinks ? parseRedirectPath(pathname, shape.pages) : undefined;
    if (movedTo !== undefined) {
      stats.redirects++;
      res.writeHead(301, { location: pagePath(movedTo), 'content-length': 0 }).end();
      return;
    }
    if (shape.brokenLinks && pathname === ERROR_PATH) return send(req, res, 500, ERROR_BODY);
    send(req, res, 404, NOT_FOUND_BODY);

    function servePage(page: number): void {
      stats.pageResponses++;
      if (served[page] === 0) {
        served[page] = 1;
        stats.distinctPages++;
      }
      send(req, res, 200, render(page));
    }
  });

  let closing: Promise<void> | undefined;
  return {
    url: `${origin}/`,
    port,
    stats: () => ({ ...stats }),
    resetStats() {
      Object.assign(stats, { requests: 0, pageResponses: 0, distinctPages: 0, redirects: 0 });
      served = new Uint8Array(shape.pages);
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

const NOT_FOUND_BODY = Buffer.from('<!doctype html>\n<title>404 Not Found</title><h1>Not Found</h1>\n');
const ERROR_BODY = Buffer.from('<!doctype html>\n<title>500 Error</title><h1>Deliberate error</h1>\n');

function send(req: IncomingMessage, res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length });
  res.end(req.method === 'HEAD' ? undefined : body);
}
