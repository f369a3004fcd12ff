import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Arrival {
  path: string;
  at: number;
}

export interface RedirectSite {
  server: Server;
  port: number;
  origin: string;
  /** Every request, in order, with when it came. */
  arrivals: Arrival[];
  close(): Promise<void>;
}

/**
 * A site on 127.0.0.1 that answers a path with a 302 to its Location, or with a page (null), as
 * `routes()` says when the request comes; anything else is a 404. `page` and `redirect` write
 * those answers' bodies and extra headers (a bare page and an empty redirect by default).
 */
export async function startRedirectSite(
  routes: () => Record<string, string | null>,
  answers: { page?: string; redirect?: (res: ServerResponse, location: string) => void } = {},
): Promise<RedirectSite> {
  const arrivals: Arrival[] = [];
  const server = createServer((req, res) => {
    arrivals.push({ path: req.url ?? '?', at: Date.now() });
    const to = routes()[req.url ?? ''];
    if (to === undefined) res.writeHead(404).end();
    else if (to === null)
      res.writeHead(200, { 'content-type': 'text/html' }).end(answers.page ?? '<p>here</p>');
    else if (answers.redirect) answers.redirect(res, to);
    else res.writeHead(302, { location: to }).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    origin: `http://127.0.0.1:${port}`,
    arrivals,
    close: () => closeServer(server),
  };
}

/** Closes a test's HTTP server at once, kept-alive connections included. */
export const closeServer = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
