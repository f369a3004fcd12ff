import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../logger.js';
import { refuseSocket } from './refuse-socket.js';
import { apiStatus } from '../error-codes/index.js';

export interface ConnectionLimits {
  /** TCP connections open at once, all addresses together (API calls and crawler sockets alike). */
  maxConnections: number;
  /** TCP connections open at once from one remote address. */
  maxConnectionsPerAddress: number;
  /** What a refused client is told to wait, in seconds (`Retry-After`). */
  retryAfterSeconds: number;
}

/** `::ffff:127.0.0.1` and `127.0.0.1` are one address. */
function addressOf(socket: Socket): string {
  const address = socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/**
 * Counts the server's TCP connections, per remote address and in all, from accept to close. One
 * over a cap is answered at once — before a byte of its request is read — with 429 (its address
 * has too many) or 503 (the scheduler has too many), `Retry-After` and a JSON error, then closed.
 * Returns a check for the request and upgrade handlers: true for a socket refused here, whose
 * request (if any arrives before it closes) must be ignored.
 */
export function limitConnections(
  server: Server,
  limits: ConnectionLimits,
  logger: Logger,
): (socket: object) => boolean {
  const perAddress = new Map<string, number>();
  const refused = new WeakSet<object>();
  let total = 0;
  let lastWarning = 0;
  server.on('connection', (socket: Socket) => {
    const address = addressOf(socket);
    const mine = perAddress.get(address) ?? 0;
    const over =
      total >= limits.maxConnections
        ? {
            status: apiStatus('TOO_MANY_CONNECTIONS'),
            code: 'TOO_MANY_CONNECTIONS',
            message: `the scheduler holds ${limits.maxConnections} connections, its limit (ACKCRAWL_MAX_CONNECTIONS); try again later`,
          }
        : mine >= limits.maxConnectionsPerAddress
          ? {
              status: apiStatus('TOO_MANY_CONNECTIONS_FROM_ADDRESS'),
              code: 'TOO_MANY_CONNECTIONS_FROM_ADDRESS',
              message: `${address} holds ${limits.maxConnectionsPerAddress} connections, the limit per address (ACKCRAWL_MAX_CONNECTIONS_PER_ADDRESS); try again later`,
            }
          : null;
    if (over) {
      refused.add(socket);
      refuseSocket(socket, over.status, over, { 'Retry-After': String(limits.retryAfterSeconds) });
      const now = Date.now();
      if (now - lastWarning > 10_000) {
        lastWarning = now;
        logger.warn({ address, total, fromAddress: mine }, 'connection refused: over the connection limits');
      }
      return;
    }
    total += 1;
    perAddress.set(address, mine + 1);
    socket.once('close', () => {
      total -= 1;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });
  return (socket) => refused.has(socket);
}
