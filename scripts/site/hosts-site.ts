import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fillParagraphs, pagePath, parsePagePath } from './page-renderer.js';
import { PolitenessLog, type HostPoliteness, type PolitenessFigures } from './politeness-log.js';
import { mulberry32, pageSeed, randomInt } from './prng.js';
import { buildParagraphPool, words } from './text-pool.js';

export interface SiteHost {
  /** Where it listens (a loopback address; the port is picked free). */
  address: string;
  /** Every response (page, robots.txt, 404) is sent this long after its request arrived. */
  latencyMs: number;
  pages: number;
}

export interface HostsSiteOptions {
  hosts: readonly SiteHost[];
  /** The politeness every host checks (it only counts violations; it answers all requests). */
  politeness: HostPoliteness;
  seed: number;
  pageBytes: number;
  linksPerPage: number;
}

/** `firstAt` and `lastAt` are ms since the first request to any host. */
export interface HostStats extends PolitenessFigures {
  url: string;
  pageResponses: number;
  distinctPages: number;
}

export interface HostsSiteStats {
  hosts: HostStats[];
  /** From the first request to any host to the last page response of any host, ms (null: none). */
  windowMs: number | null;
}

export interface HostsSite {
  urls: string[];
  stats(): HostsSiteStats;
  resetStats(): void;
  close(): Promise<void>;
}

/** Links on each page that point to another host (the rest stay on the page's own host). */
const CROSS_HOST_SHARE = 0.3;

/**
 * Many slow hosts for `npm run bench -- --hosts`: one HTTP server per host, each on its own
 * loopback address, answering after its own latency and logging the politeness of what it gets
 * (politeness-log.ts). Host h's page n is `/` or `/p/n`; it links to n+1 on its own host (so a
 * crawl from a host's `/` reaches all its pages), to random pages of its own host, and to random
 * pages of other hosts, absolutely, so a crawl spreads from host to host.
 */
export async function startHostsSite(o: HostsSiteOptions): Promise<HostsSite> {
  const pool = buildParagraphPool(o.seed);
  const servers: Server[] = [];
  const origins: string[] = [];
  let firstRequestAt: number | null = null;
  let lastPageAt: number | null = null;
  const hosts = o.hosts.map((host) => ({
    host,
    log: new PolitenessLog(o.politeness),
    served: new Uint8Array(host.pages),
    pageResponses: 0,
    distinctPages: 0,
  }));

  for (const state of hosts) {
    const server = createServer();
    server.keepAliveTimeout = 60_000;
    server.headersTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, state.host.address, () => resolve());
    });
    servers.push(server);
    origins.push(`http://${state.host.address}:${(server.address() as AddressInfo).port}`);
  }

  const render = (index: number, page: number): Buffer => {
    const { pages } = o.hosts[index] as SiteHost;
    const random = mulberry32(pageSeed(o.seed ^ Math.imul(index + 1, 0x9e3779b1), page));
    const title = `Host ${index} page ${page}: ${words(random, 4)}`;
    const hrefs = [pagePath(page + 1 < pages ? page + 1 : 0)];
    const cross = Math.round(o.linksPerPage * CROSS_HOST_SHARE);
    while (hrefs.length < o.linksPerPage - cross) hrefs.push(pagePath(randomInt(random, pages)));
    while (hrefs.length < o.linksPerPage) {
      const other = randomInt(random, o.hosts.length);
      hrefs.push(`${origins[other]}${pagePath(randomInt(random, (o.hosts[other] as SiteHost).pages))}`);
    }
    const head =
      `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>\n` +
      `<body><h1>${title}</h1>\n`;
    const list = `<ul>\n${hrefs.map((h) => `<li><a href="${h}">${h}</a></li>\n`).join('')}</ul>\n`;
    const tail = '</body></html>\n';
    const body = fillParagraphs(pool, random, o.pageBytes - head.length - list.length - tail.length);
    return Buffer.from(head + body + list + tail, 'latin1');
  };

  hosts.forEach((state, index) => {
    (servers[index] as Server).on('request', (req: IncomingMessage, res: ServerResponse) => {
      const now = performance.now();
      firstRequestAt ??= now;
      state.log.arrive(now);
      let left = false;
      const leave = (): void => {
        if (left) return;
        left = true;
        state.log.leave();
      };
      res.once('finish', leave);
      res.once('close', leave);
      const timer = setTimeout(() => answer(), state.host.latencyMs);
      res.once('close', () => clearTimeout(timer));

      function answer(): void {
        const pathname = (req.url ?? '/').split('?', 1)[0] ?? '/';
        const page = req.method === 'GET' ? parsePagePath(pathname, state.host.pages) : undefined;
        if (page === undefined) return send(res, 404, NOT_FOUND_BODY);
        state.pageResponses += 1;
        if (state.served[page] === 0) {
          state.served[page] = 1;
          state.distinctPages += 1;
        }
        lastPageAt = performance.now();
        send(res, 200, render(index, page));
      }
    });
  });

  let closing: Promise<void> | undefined;
  return {
    urls: origins.map((origin) => `${origin}/`),
    stats: () => ({
      hosts: hosts.map((state, index) => {
        const figures = state.log.stats();
        const since = (at: number | null): number | null =>
          at === null || firstRequestAt === null ? null : at - firstRequestAt;
        return {
          url: `${origins[index]}/`,
          pageResponses: state.pageResponses,
          distinctPages: state.distinctPages,
          ...figures,
          firstAt: since(figures.firstAt),
          lastAt: since(figures.lastAt),
        };
      }),
      windowMs: firstRequestAt !== null && lastPageAt !== null ? lastPageAt - firstRequestAt : null,
    }),
    resetStats() {
      firstRequestAt = null;
      lastPageAt = null;
      for (const state of hosts) {
        state.log.reset();
        state.served = new Uint8Array(state.host.pages);
        state.pageResponses = 0;
        state.distinctPages = 0;
      }
    },
    close() {
      closing ??= Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              server.closeAllConnections();
            }),
        ),
      ).then(() => undefined);
      return closing;
    },
  };
}

const NOT_FOUND_BODY = Buffer.from('<!doctype html>\n<title>404 Not Found</title><h1>Not Found</h1>\n');

function send(res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length });
  res.end(body);
}
