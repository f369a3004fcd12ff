import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Answers on a raw socket with a JSON error, reads nothing more from it, and closes it a second
 * later: for refusals before a request is read (connection limits, crawler upgrades) or while its
 * body still comes (an API call refused before its body was read). Destroying the socket at once
 * with unread data would reset the connection and could lose the answer; reading the rest would
 * cost what the refusal saves.
 */
export function refuseSocket(
  socket: Duplex,
  status: number,
  error: { code: string; message: string },
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ error: { code: error.code, message: error.message } });
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.on('error', () => socket.destroy());
  socket.pause();
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `${extra}Connection: close\r\n\r\n${body}`,
  );
  // Not unref'd: a server closing waits for this socket, which goes within the second.
  setTimeout(() => socket.destroy(), 1000);
}
