import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { AppError, InvalidInputError, errorMessage } from '../../../shared/errors.js';
import { ADMIN_TOKEN_FILE } from '../../api/auth/bootstrap-admin.js';

export const DEFAULT_MASTER_URL = 'http://127.0.0.1:8600';

export interface MasterClientEnv {
  /** ACKCRAWL_MASTER_URL */
  masterUrl?: string | undefined;
  /** ACKCRAWL_TOKEN */
  token?: string | undefined;
  /** ACKCRAWL_DATA_DIR: where a master on this machine keeps admin-token. */
  dataDir: string;
}

export interface MasterClient {
  readonly baseUrl: string;
  call(method: string, path: string, body?: unknown): Promise<unknown>;
  /** A GET whose answer is a file (an export): its body as a stream. */
  download(path: string): Promise<Readable>;
}

/** The token people use: ACKCRAWL_TOKEN, else the admin token a master here wrote to its data dir. */
export function masterToken(env: MasterClientEnv): string {
  if (env.token) return env.token;
  const path = join(resolve(env.dataDir), ADMIN_TOKEN_FILE);
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  // A usage problem (exit code 2), as a missing cluster token is for `ackcrawl crawl --cluster`.
  throw new InvalidInputError(
    'NO_MASTER_TOKEN',
    `no token: set ACKCRAWL_TOKEN to an API token, or ACKCRAWL_DATA_DIR to the master's data dir (no ${path})`,
  );
}

/** A client of the master's API (/api/v1) for the CLI: JSON in and out, errors as AppErrors. */
export function createMasterClient(env: MasterClientEnv): MasterClient {
  const baseUrl = (env.masterUrl || DEFAULT_MASTER_URL).replace(/\/+$/, '');
  const token = masterToken(env);
  const request = async (
    method: string,
    path: string,
    init: { accept: string; body?: unknown; timeoutMs: number | null },
  ): Promise<Response> => {
    try {
      return await fetch(`${baseUrl}/api/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: init.accept,
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        ...(init.timeoutMs === null ? {} : { signal: AbortSignal.timeout(init.timeoutMs) }),
      });
    } catch (err) {
      throw new AppError(
        'MASTER_UNREACHABLE',
        `cannot reach the master at ${baseUrl} (${errorMessage(err)}); is ACKCRAWL_MASTER_URL right?`,
        { cause: err },
      );
    }
  };
  return {
    baseUrl,
    async call(method, path, body) {
      const response = await request(method, path, { accept: 'application/json', body, timeoutMs: 30_000 });
      if (response.status === 204) return null;
      const text = await response.text();
      if (!response.ok) throw refused(response.status, text);
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return null;
      }
    },
    async download(path) {
      // A large export takes as long as it takes: no overall timeout, the server streams it.
      const response = await request('GET', path, { accept: '*/*', timeoutMs: null });
      if (!response.ok || response.body === null) throw refused(response.status, await response.text());
      return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
    },
  };
}

/** The master's error answer as an AppError (its code in `details.code`). */
function refused(status: number, text: string): AppError {
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: its first characters are shown
  }
  const error = (
    json as {
      error?: { code?: string; message?: string; problems?: { field: string; message: string }[] };
    } | null
  )?.error;
  const problems = (error?.problems ?? []).map((p) => `\n  ${p.field}: ${p.message}`).join('');
  return new AppError(
    'MASTER_REFUSED',
    `${status} ${error?.code ?? 'error'}: ${error?.message ?? text.slice(0, 200)}${problems}`,
    { status: status >= 500 ? undefined : 400, details: { code: error?.code } },
  );
}
