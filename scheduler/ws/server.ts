import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import { WebSocketServer, type WebSocket } from 'ws';
import { ProtocolError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { PRE_HELLO_MAX_BYTES } from '../../shared/protocol/frame-limits.js';
import { answerClientErrors } from '../../shared/http/client-errors.js';
import { limitConnections } from '../../shared/http/connection-limits.js';
import type { HostPolicy } from '../../shared/http/request-guards.js';
import type { TlsServerOptions } from '../../shared/config/tls.js';
import { MAX_HEADER_BYTES, type EndpointSettings } from './endpoint-settings.js';
import { WsSession, type SessionHandlers, type SessionOptions } from './session.js';
import { CRAWLER_PATH, crawlerUpgradeHandler } from './upgrade.js';

export interface WsServerOptions extends SessionOptions {
  host: string;
  port: number;
  /** A listening socket's file descriptor, inherited, to serve on instead of binding host:port. */
  listenFd?: number;
  /** The bearer token crawlers present on the upgrade. */
  token: string;
  hosts: HostPolicy;
  /** The largest message an accepted crawler may send (shared/protocol/frame-limits.ts). */
  maxPayloadBytes: number;
  endpoint: EndpointSettings;
  handlers: SessionHandlers;
  /** The HTTP API (scheduler/http/app.ts), served on the same port. */
  app: Koa;
  /** Certificate and key: the port speaks HTTPS and WSS only. */
  tls?: TlsServerOptions | null;
  logger: Logger;
}

export interface RunningWsServer {
  /** ws://host:port/crawlers (wss:// with TLS) */
  url: string;
  /** Sessions that said hello: only these get tasks, `settings` and anything else. */
  sessions: Set<WsSession>;
  close(): Promise<void>;
}

/**
 * The crawler endpoint (`/crawlers`) and the HTTP API on one port. Before authentication only a
 * request head is read (at most 16 KiB, within `headersTimeoutMs`); connections are capped per
 * address and in all; an accepted socket may send at most 64 KiB before its hello.
 */
export async function startWsServer(options: WsServerOptions): Promise<RunningWsServer> {
  const { endpoint, logger } = options;
  const api = options.app.callback();
  const serverOptions = {
    maxHeaderSize: MAX_HEADER_BYTES,
    headersTimeout: endpoint.headersTimeoutMs,
    requestTimeout: endpoint.requestTimeoutMs,
    // How often Node looks for requests past those timeouts (its default, 30 s, lets a slow
    // client hold a connection for that long).
    connectionsCheckingInterval: Math.min(1_000, endpoint.headersTimeoutMs),
    // A request without Host is refused by the Host check, with a JSON error like the others.
    requireHostHeader: false,
  };
  const http: Server = options.tls
    ? createTlsServer({ ...serverOptions, ...options.tls })
    : createServer(serverOptions);
  http.keepAliveTimeout = 5_000;
  answerClientErrors(http);
  const refused = limitConnections(http, endpoint, logger);
  http.on('request', (req, res) => {
    if (refused(req.socket)) req.socket.destroy();
    else void api(req, res);
  });
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayloadBytes,
    perMessageDeflate: false,
  });
  const sessions = new Set<WsSession>();
  const open = (ws: WebSocket, socket: Duplex): void => {
    let ready = false;
    let received = 0;
    const session = new WsSession(
      ws,
      {
        ...options.handlers,
        onReady: (s) => {
          ready = true;
          socket.off('data', count);
          sessions.add(s);
          options.handlers.onReady(s);
        },
        onClose: (s) => {
          socket.off('data', count);
          sessions.delete(s);
          options.handlers.onClose(s);
        },
      },
      {
        ...options,
        helloTimeoutMs: endpoint.helloTimeoutMs,
        maxCredit: endpoint.maxSessionCredit,
        logger: options.logger,
      },
    );
    // Counted as the bytes arrive, so an oversized first frame is cut off before ws has buffered it.
    const count = (chunk: Buffer): void => {
      received += chunk.length;
      if (ready || received <= PRE_HELLO_MAX_BYTES) return;
      socket.off('data', count);
      // Nothing more is read from this socket; the error goes out and it is cut off in a second.
      ws.pause();
      session.fatal(
        new ProtocolError('PRE_HELLO_LIMIT', `more than ${PRE_HELLO_MAX_BYTES} bytes before hello; closing`),
      );
    };
    socket.on('data', count);
  };
  http.on(
    'upgrade',
    crawlerUpgradeHandler({ wss, token: options.token, hosts: options.hosts, refused, logger, onOpen: open }),
  );
  wss.on('error', (err) => logger.error({ err }, 'websocket server error'));
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    const ready = (): void => {
      http.off('error', reject);
      resolve();
    };
    if (options.listenFd !== undefined) http.listen({ fd: options.listenFd }, ready);
    else http.listen(options.port, options.host, ready);
  });
  http.on('error', (err) => logger.error({ err }, 'http server error'));
  const address = http.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | null = null;
  return {
    url: `${options.tls ? 'wss' : 'ws'}://${host}:${address.port}${CRAWLER_PATH}`,
    sessions,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        for (const client of wss.clients) client.close(1001, 'scheduler closing');
        wss.close(() => http.close(() => resolve()));
        setTimeout(() => {
          for (const client of wss.clients) client.terminate();
          http.closeAllConnections();
        }, 2000).unref();
      })),
  };
}
