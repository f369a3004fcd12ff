import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A site of four pages on 127.0.0.1: `/slow` answers only once the test lets it (the run stays
 * live, with a request in flight), `/missing` is a 404 (a final failure at once), `/flaky` a 429
 * with Retry-After: 5 the first time (a cool-down of the host, and a retry the run makes itself).
 * It counts the requests of each path.
 */
export interface RetrySite {
  url: string;
  hits: Map<string, number>;
  release(): void;
  close(): Promise<void>;
}

export async function startRetrySite(): Promise<RetrySite> {
  const hits = new Map<string, number>();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const html = (body: string) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body>${body}</body></html>`);
    };
    if (path === '/') return html('<a href="/slow">s</a> <a href="/missing">m</a> <a href="/flaky">f</a>');
    if (path === '/slow') return void released.then(() => html('slow'));
    if (path === '/flaky' && hits.get(path) === 1) {
      res.writeHead(429, { 'retry-after': '5' });
      return void res.end();
    }
    if (path === '/flaky') return html('flaky');
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    hits,
    release,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
