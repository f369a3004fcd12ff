import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import type { Logger } from '../../../shared/logger.js';
import { resolvePublic, type Resolved } from './address-guard.js';

/** Set on the proxy's own answers: the address was refused, with the reason. */
export const BLOCKED_HEADER = 'x-ackcrawl-blocked';
/** Set on the proxy's own answers: the upstream connection failed, with the socket error code. */
export const FAILED_HEADER = 'x-ackcrawl-failed';

const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
];

export interface GuardProxy {
  /** `http://127.0.0.1:port`, for the browser's proxy setting. */
  readonly url: string;
  /** Why the last tunnel to `host:port` failed (the browser only says "tunnel failed"). */
  tunnelFailure(authority: string): { blocked: boolean; code: string } | null;
  close(): Promise<void>;
}

/**
 * An HTTP proxy on loopback through which a browser context that may not reach private addresses
 * sends all its traffic: plain requests, HTTPS and WebSocket tunnels (CONNECT), every redirect hop.
 * Each connection resolves the host once, refuses non-public addresses, and connects to the very
 * address it checked. Its refusals and failures carry a marker header so the renderer can record
 * ADDRESS_BLOCKED or the network error instead of an HTTP status the server never sent.
 */
export async function startGuardProxy(options: {
  logger: Logger;
  /** Host → the address to connect to, or why not (default: `resolvePublic`; tests map names). */
  resolve?: (hostname: string) => Promise<Resolved>;
}): Promise<GuardProxy> {
  const { logger } = options;
  const resolve = options.resolve ?? ((hostname: string) => resolvePublic(hostname));
  const failures = new Map<string, { blocked: boolean; code: string }>();
  const remember = (authority: string, failure: { blocked: boolean; code: string }): void => {
    failures.delete(authority);
    failures.set(authority, failure);
    if (failures.size > 1000) failures.delete(failures.keys().next().value as string);
  };
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  const server = http.createServer((req, res) => void forward(req, res));
  server.on('connection', track);
  server.on(
    'connect',
    (req: IncomingMessage, client: Socket, head: Buffer) => void tunnel(req, client, head),
  );

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.on('error', () => undefined);
    let target: URL;
    try {
      target = new URL(req.url ?? '');
      if (target.protocol !== 'http:') throw new Error(target.protocol);
    } catch {
      res.writeHead(400, { [FAILED_HEADER]: 'BAD_PROXY_REQUEST' }).end();
      return;
    }
    const resolved = await resolve(target.hostname);
    if ('blocked' in resolved) {
      logger.debug({ url: target.href, reason: resolved.blocked }, 'browser request refused');
      // A body: Chromium turns an empty error answer into a bare net error, losing the marker.
      res
        .writeHead(403, { [BLOCKED_HEADER]: encodeURIComponent(resolved.blocked) })
        .end('blocked by ackcrawl');
      return;
    }
    if ('failed' in resolved) {
      res.writeHead(502, { [FAILED_HEADER]: resolved.failed }).end('upstream failed');
      return;
    }
    const headers = { ...req.headers };
    for (const name of HOP_BY_HOP) delete headers[name];
    const upstream = http.request(
      {
        host: resolved.address,
        family: resolved.family,
        port: target.port || 80,
        method: req.method,
        path: `${target.pathname}${target.search}`,
        headers,
        setHost: false,
      },
      (response) => {
        const back = { ...response.headers };
        for (const name of HOP_BY_HOP) delete back[name];
        res.writeHead(response.statusCode ?? 502, response.statusMessage, back);
        response.pipe(res);
      },
    );
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { [FAILED_HEADER]: err.code ?? 'ECONNRESET' }).end('upstream failed');
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  }

  async function tunnel(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    client.on('error', () => undefined);
    const authority = req.url ?? '';
    const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(authority);
    if (!match) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const resolved = await resolve(match[1] as string);
    if ('blocked' in resolved || 'failed' in resolved) {
      const blocked = 'blocked' in resolved;
      remember(authority, { blocked, code: blocked ? 'ADDRESS_BLOCKED' : resolved.failed });
      client.end(`HTTP/1.1 ${blocked ? '403 Forbidden' : '502 Bad Gateway'}\r\n\r\n`);
      return;
    }
    const upstream = net.connect({ host: resolved.address, port: Number(match[2]) });
    track(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      failures.delete(authority);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      remember(authority, { blocked: false, code: err.code ?? 'ECONNRESET' });
      if (!connected && client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      else client.destroy();
    });
    client.on('close', () => upstream.destroy());
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tunnelFailure: (authority) => failures.get(authority) ?? null,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
