import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import { AppError, InvalidInputError } from '../errors.js';

/** The largest request body the scheduler reads. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/**
 * The request body as JSON: `Content-Type: application/json` (else 415), at most `limitBytes`
 * (else 413, before reading when Content-Length says so), and valid JSON (else 400).
 */
export async function readJsonBody(ctx: Context, limitBytes = MAX_JSON_BODY_BYTES): Promise<unknown> {
  if (ctx.request.type !== 'application/json') {
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      'send the body as JSON, with Content-Type: application/json',
    );
  }
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limitBytes) throw tooLarge(limitBytes);
  const body = await readLimited(ctx.req, limitBytes);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new InvalidInputError('BAD_JSON', `the request body is not JSON (${(err as Error).message})`);
  }
}

function tooLarge(limitBytes: number): AppError {
  return new AppError('REQUEST_TOO_LARGE', `the request body is over ${limitBytes} bytes`);
}

/**
 * Reads the body, stopping at the limit. The stream is paused rather than destroyed there, so the
 * 413 still gets out; the error response closes the connection, which discards the rest.
 */
function readLimited(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limitBytes) {
        cleanup();
        req.pause();
        reject(tooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(new InvalidInputError('BODY_ABORTED', 'the request body did not arrive whole', { cause: err }));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
