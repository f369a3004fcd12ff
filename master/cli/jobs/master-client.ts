import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
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
  return {
    baseUrl,
    async call(method, path, body) {
      let response: Response;
      try {
        response = await fetch(`${baseUrl}/api/v1${path}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(30_000),
        });
      } catch (err) {
        throw new AppError(
          'MASTER_UNREACHABLE',
          `cannot reach the master at ${baseUrl} (${errorMessage(err)}); is ACKCRAWL_MASTER_URL right?`,
          {
            cause: err,
          },
        );
      }
      if (response.status === 204) return null;
      const text = await response.text();
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch {
        // answered below
      }
      if (response.ok) return json;
      const error = (
        json as {
          error?: { code?: string; message?: string; problems?: { field: string; message: string }[] };
        } | null
      )?.error;
      const problems = (error?.problems ?? []).map((p) => `\n  ${p.field}: ${p.message}`).join('');
      throw new AppError(
        'MASTER_REFUSED',
        `${response.status} ${error?.code ?? 'error'}: ${error?.message ?? text.slice(0, 200)}${problems}`,
        { status: response.status >= 500 ? undefined : 400, details: { code: error?.code } },
      );
    },
  };
}
