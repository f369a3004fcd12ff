import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { createFileAtomic } from '../files/atomic-write.js';

/**
 * The cluster's shared secret. Crawlers present it on the WebSocket upgrade, the CLI on every API
 * call (`Authorization: Bearer <token>`). Given as ACKCRAWL_TOKEN, or else kept in the scheduler's
 * data folder: a scheduler started without one creates `<dataDir>/token` (0600) at its first start,
 * and local agents, crawlers and the CLI read it from there.
 */
export const TOKEN_FILE = 'token';

/** The shortest token accepted, in characters (a generated one has 48). */
export const MIN_TOKEN_LENGTH = 16;

export function tokenPath(dataDir: string): string {
  return join(resolve(dataDir), TOKEN_FILE);
}

/** The token in `<dataDir>/token`, or null when there is no such file. */
export function readTokenFile(dataDir: string): string | null {
  const path = tokenPath(dataDir);
  if (!existsSync(path)) return null;
  let token: string;
  try {
    token = readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new ConfigError([
      `token file ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}): run as the user that owns it, or set ACKCRAWL_TOKEN`,
    ]);
  }
  if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
    throw new ConfigError([
      `token file ${path} does not hold a token (one line of at least ${MIN_TOKEN_LENGTH} characters): delete it so the scheduler makes a new one, or set ACKCRAWL_TOKEN`,
    ]);
  }
  return token;
}

export type TokenSource = 'config' | 'file' | 'created';

/**
 * The scheduler's token: the configured one, else the one in `<dataDir>/token`, else a new random
 * one written there (atomically, 0600; if another scheduler on the same folder wins the race, its
 * token is used).
 */
export function schedulerToken(
  configured: string | undefined,
  dataDir: string,
): { token: string; source: TokenSource; path: string } {
  const path = tokenPath(dataDir);
  if (configured !== undefined) return { token: configured, source: 'config', path };
  const existing = readTokenFile(dataDir);
  if (existing !== null) return { token: existing, source: 'file', path };
  const fresh = randomBytes(24).toString('hex');
  if (createFileAtomic(path, `${fresh}\n`, { mode: 0o600 })) return { token: fresh, source: 'created', path };
  return { token: readTokenFile(dataDir) ?? fresh, source: 'file', path };
}

/**
 * The token a client role (agent, crawler, CLI) presents: the configured one, else the one the
 * scheduler keeps in `<dataDir>/token`. Neither: a ConfigError that says what to set.
 */
export function clientToken(configured: string | undefined, dataDir: string): string {
  if (configured !== undefined && configured !== '') return configured;
  const found = readTokenFile(dataDir);
  if (found !== null) return found;
  throw new ConfigError([
    `token (ACKCRAWL_TOKEN): not set, and there is no token file at ${tokenPath(dataDir)}. ` +
      "Set ACKCRAWL_TOKEN to the scheduler's token, or ACKCRAWL_DATA_DIR to the scheduler's data " +
      'folder (a scheduler started without ACKCRAWL_TOKEN writes its token to <dataDir>/token)',
  ]);
}
