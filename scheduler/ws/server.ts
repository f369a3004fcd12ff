import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { Logger } from '../../shared/logger.js';
import { WsSession, type SessionHandlers, type SessionOptions } from './session.js';

export interface WsServerOptions extends SessionOptions {
  host: string;
  port: number;
  maxPayloadBytes: number;
  handlers: SessionHandlers;
  /** Plain HTTP requests on the same port (the crawl API); WebSocket upgrades go to /crawlers. */
  http: (req: IncomingMessage, res: ServerResponse) => void;
  logger: Logger;
}

export interface RunningWsServer {
  /** ws://host:port/crawlers */
  url: string;
  sessions: Set<WsSession>;
  close(): Promise<void>;
}

/** The crawler endpoint (`/crawlers`) and the HTTP API (`/health`, `/crawl`) on one port. */
export async function startWsServer(options: WsServerOptions): Promise<RunningWsServer> {
  const http: Server = createServer(options.http);
  const wss = new WebSocketServer({ server: http, path: '/crawlers', maxPayload: options.maxPayloadBytes });
  const sessions = new Set<WsSession>();
  wss.on('connection', (ws) => {
    const session = new WsSession(
      ws,
      {
        ...options.handlers,
        onClose: (s) => {
          sessions.delete(s);
          options.handlers.onClose(s);
        },
      },
      options,
    );
    sessions.add(session);
  });
  wss.on('error', (err) => options.logger.error({ err }, 'websocket server error'));
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const address = http.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | null = null;
  return {
    url: `ws://${host}:${address.port}/crawlers`,
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
