import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { AppError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { bearerMatches } from '../../shared/http/bearer.js';
import { refuseSocket } from '../../shared/http/refuse-socket.js';
import { crossOriginProblem, type HostPolicy } from '../../shared/http/request-guards.js';

import { CRAWLER_PATH } from '../../shared/protocol/crawler-path.js';

export { CRAWLER_PATH };

export interface UpgradeDeps {
  wss: WebSocketServer;
  token: string;
  hosts: HostPolicy;
  /** Sockets the connection limits already answered (scheduler/http/connection-limits.ts). */
  refused: (socket: object) => boolean;
  logger: Logger;
  /** A crawler socket past every check: the WebSocket is open. */
  onOpen(ws: WebSocket, socket: Duplex): void;
}

/** Why an upgrade request is refused, or null to open the WebSocket. Only its head was read. */
function refusalOf(req: IncomingMessage, deps: UpgradeDeps): AppError | null {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== CRAWLER_PATH) {
    return new AppError('NOT_FOUND', `crawlers connect to ${CRAWLER_PATH}`);
  }
  const problem =
    deps.hosts.check(req.headers.host) ??
    crossOriginProblem(
      {
        origin: req.headers.origin,
        host: req.headers.host,
        'sec-fetch-site': headerValue(req.headers['sec-fetch-site']),
      },
      false,
    );
  if (problem) return problem;
  if (!bearerMatches(req.headers.authorization, deps.token)) {
    return new AppError(
      'UNAUTHORIZED',
      "a valid bearer token is required on the upgrade (Authorization: Bearer <token>); crawlers send ACKCRAWL_TOKEN or the scheduler's token file",
    );
  }
  return null;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The crawler endpoint's gate, run on the request head alone, before the WebSocket opens: the
 * path, the Host (DNS rebinding), no browser (`Origin`), and the bearer token (constant-time).
 * A refused socket gets an HTTP error and never becomes a session, so nothing — no `settings`,
 * no proxy credentials — is ever sent to it.
 */
export function crawlerUpgradeHandler(deps: UpgradeDeps) {
  let lastWarning = 0;
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => socket.destroy());
    if (deps.refused(socket)) {
      socket.destroy();
      return;
    }
    const refusal = refusalOf(req, deps);
    if (refusal) {
      const now = Date.now();
      if (now - lastWarning > 10_000) {
        lastWarning = now;
        deps.logger.warn(
          { code: refusal.code, address: req.socket.remoteAddress, path: (req.url ?? '').slice(0, 100) },
          'crawler upgrade refused',
        );
      }
      const status = refusal.status ?? 400;
      refuseSocket(
        socket,
        status,
        refusal,
        status === 401 ? { 'WWW-Authenticate': 'Bearer realm="ackcrawl"' } : {},
      );
      return;
    }
    deps.wss.handleUpgrade(req, socket, head, (ws) => deps.onOpen(ws, socket));
  };
}
