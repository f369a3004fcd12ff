import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local site that records each request it gets: its path and headers, in order. */
export interface RecordingSite {
  /** `http://host:port` */
  origin: string;
  /** `host:port`, as a host pattern names it. */
  host: string;
  seen: { path: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

export async function startRecordingSite(
  address: string,
  handle: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<RecordingSite> {
  const seen: RecordingSite['seen'] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const host = `${address}:${(server.address() as AddressInfo).port}`;
  return {
    origin: `http://${host}`,
    host,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An HTML page of links, with the given response headers. */
export function linksPage(res: ServerResponse, links: string[], headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'text/html', ...headers });
  res.end(`<!doctype html><body>${links.map((l) => `<a href="${l}">${l}</a>`).join('')}</body>`);
}
