import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { apiStatus, type ApiErrorCode } from '../error-codes/index.js';

/** Node's parser errors, as the API's JSON errors. */
const ANSWERS: Record<string, { status: number; code: ApiErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: apiStatus('HEADERS_TOO_LARGE'),
    code: 'HEADERS_TOO_LARGE',
    message: 'the request head is over 16 KiB',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: apiStatus('REQUEST_TIMEOUT'),
    code: 'REQUEST_TIMEOUT',
    message: 'the request did not arrive in time',
  },
};
const MALFORMED = {
  status: apiStatus('BAD_REQUEST'),
  code: 'BAD_REQUEST',
  message: 'the request is not valid HTTP/1.1',
};

/**
 * Requests Node cannot parse, or that arrive too slowly, get a JSON error like any other refusal
 * (Node's default answer is a bare status line) and the connection is closed.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, code, message } = ANSWERS[err.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify({ error: { code, message } });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
