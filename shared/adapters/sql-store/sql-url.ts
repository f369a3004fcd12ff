import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type pg from 'pg';
import type sql from 'mssql';
import { StorageError } from '../../errors.js';

/**
 * Which database a store URL names, and how to reach it:
 * - `sqlite:<path>` (also `sqlite:///abs/path`, `sqlite::memory:`), or a plain path: SQLite;
 * - `postgres://` or `postgresql://`: PostgreSQL, handed to pg as its connection string (its
 *   `sslmode`, `sslrootcert`, `application_name`, `options` … parameters work as pg documents);
 * - `mssql://user:password@host:port/database?encrypt=true&trustServerCertificate=false` (or
 *   `sqlserver://`): SQL Server.
 * `caFile` (ACKCRAWL_SQL_CA_FILE) is a PEM bundle to verify the server's certificate with.
 * Credentials in a URL are percent-encoded; no message here ever repeats them.
 */
export type SqlTarget =
  | { dialect: 'sqlite'; path: string }
  | { dialect: 'postgres'; config: pg.PoolConfig }
  | { dialect: 'mssql'; config: sql.config };

export interface SqlUrlOptions {
  caFile?: string;
  /** Connections per pool (PostgreSQL, SQL Server; default 10). */
  poolMax?: number;
  readFile?: (path: string) => Buffer;
}

const SCHEME = /^([a-z][a-z0-9+.-]+):/i;

function invalid(url: string, why: string): StorageError {
  return new StorageError('SQL_URL_INVALID', `SQL store URL ${describeSqlUrl(url)}: ${why}`);
}

/** The URL as it may be logged: any password replaced by `***`. */
export function describeSqlUrl(url: string): string {
  const scheme = SCHEME.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined || scheme === 'sqlite') return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    for (const key of [...parsed.searchParams.keys()]) {
      if (/password|secret|token/i.test(key)) parsed.searchParams.set(key, '***');
    }
    return parsed.toString();
  } catch {
    return `${scheme}://…`;
  }
}

export function parseSqlUrl(url: string, options: SqlUrlOptions = {}): SqlTarget {
  const trimmed = url.trim();
  if (trimmed === '') throw invalid(url, 'is empty');
  const scheme = SCHEME.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme === undefined) return { dialect: 'sqlite', path: resolve(trimmed) };
  if (scheme === 'sqlite')
    return { dialect: 'sqlite', path: sqlitePath(url, trimmed.slice('sqlite:'.length)) };
  const ca = options.caFile === undefined ? undefined : readCa(url, options.caFile, options.readFile);
  if (scheme === 'postgres' || scheme === 'postgresql')
    return postgresTarget(url, trimmed, ca, options.poolMax);
  if (scheme === 'mssql' || scheme === 'sqlserver') return mssqlTarget(url, trimmed, ca, options.poolMax);
  throw invalid(url, `unknown scheme '${scheme}:' (use sqlite:, postgres:// or mssql://)`);
}

function sqlitePath(url: string, rest: string): string {
  const path = rest.startsWith('//') ? rest.slice(2) : rest;
  if (path === ':memory:') return path;
  if (path === '') throw invalid(url, 'names no file');
  return isAbsolute(path) ? path : resolve(path);
}

function readCa(
  url: string,
  caFile: string,
  readFile: (path: string) => Buffer = (p) => readFileSync(p),
): Buffer {
  try {
    return readFile(caFile);
  } catch {
    throw invalid(url, `the CA file ${caFile} cannot be read`);
  }
}

function parse(url: string, text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw invalid(url, 'is not a URL (percent-encode special characters in the user and password)');
  }
}

function postgresTarget(url: string, text: string, ca: Buffer | undefined, poolMax = 10): SqlTarget {
  const parsed = parse(url, text);
  if (!parsed.hostname && !parsed.searchParams.get('host')) throw invalid(url, 'names no host');
  const config: pg.PoolConfig = { max: poolMax, connectionTimeoutMillis: 10_000, idleTimeoutMillis: 30_000 };
  if (ca === undefined) return { dialect: 'postgres', config: { ...config, connectionString: text } };
  // pg lets the connection string's SSL parameters override `ssl`, so with a CA file they are
  // read here and removed from the string.
  const sslmode = parsed.searchParams.get('sslmode') ?? 'verify-full';
  for (const key of ['sslmode', 'sslrootcert', 'uselibpqcompat']) parsed.searchParams.delete(key);
  const ssl = sslmode === 'disable' ? false : { ca, rejectUnauthorized: sslmode !== 'no-verify' };
  return { dialect: 'postgres', config: { ...config, connectionString: parsed.toString(), ssl } };
}

const MSSQL_PARAMS = new Set([
  'encrypt',
  'trustServerCertificate',
  'instanceName',
  'connectTimeoutMs',
  'requestTimeoutMs',
  'appName',
]);

function mssqlTarget(url: string, text: string, ca: Buffer | undefined, poolMax = 10): SqlTarget {
  const parsed = parse(url, text);
  const params = parsed.searchParams;
  for (const key of params.keys()) {
    if (!MSSQL_PARAMS.has(key))
      throw invalid(url, `unknown parameter '${key}' (known: ${[...MSSQL_PARAMS].join(', ')})`);
  }
  const flag = (key: string, fallback: boolean): boolean => {
    const value = params.get(key);
    if (value === null) return fallback;
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw invalid(url, `${key} must be true or false`);
  };
  const ms = (key: string, fallback: number): number => {
    const value = params.get(key);
    if (value === null) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1)
      throw invalid(url, `${key} must be a positive whole number of milliseconds`);
    return n;
  };
  const server = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!server) throw invalid(url, 'names no host');
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (database.includes('/')) throw invalid(url, 'the path must be just the database name');
  const instanceName = params.get('instanceName') ?? undefined;
  const config: sql.config = {
    server,
    ...(parsed.port && !instanceName ? { port: Number(parsed.port) } : {}),
    ...(parsed.username ? { user: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(database ? { database } : {}),
    connectionTimeout: ms('connectTimeoutMs', 15_000),
    requestTimeout: ms('requestTimeoutMs', 30_000),
    pool: { max: poolMax, min: 0, idleTimeoutMillis: 30_000 },
    options: {
      encrypt: flag('encrypt', true),
      trustServerCertificate: flag('trustServerCertificate', false),
      appName: params.get('appName') ?? 'ackcrawl',
      ...(instanceName ? { instanceName } : {}),
      ...(ca ? { cryptoCredentialsDetails: { ca } } : {}),
    },
  };
  return { dialect: 'mssql', config };
}
