import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './redirect-site.js';

export interface LinkSite {
  origin: string;
  /** Path and query of every request, in order of arrival. */
  requested: string[];
  close(): Promise<void>;
}

/**
 * A site of HTML pages, each a list of links, keyed by path and query (`/a?id=2`); anything else
 * is a 404. On 127.0.0.1, a port of its own.
 */
export async function startLinkSite(pages: Readonly<Record<string, readonly string[]>>): Promise<LinkSite> {
  const requested: string[] = [];
  const server: Server = createServer((req, res) => {
    requested.push(req.url ?? '');
    const links = pages[req.url ?? ''];
    if (!links) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(links.map((href) => `<a href="${href}">${href}</a>`).join('\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requested,
    close: () => closeServer(server),
  };
}
