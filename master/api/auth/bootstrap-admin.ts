import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '../../../shared/errors.js';
import { createFileAtomic } from '../../../shared/files/atomic-write.js';
import type { Logger } from '../../../shared/logger.js';
import type { TokenRepository } from '../../../shared/ports/sql-store.js';
import { isConflict } from '../store-errors.js';
import { generateSecret, hashSecret } from './secrets.js';

/** The file in the master's data dir that holds a generated admin token (mode 0600). */
export const ADMIN_TOKEN_FILE = 'admin-token';
export const BOOTSTRAP_TOKEN_NAME = 'bootstrap admin';
const MIN_LENGTH = 16;

export interface BootstrapResult {
  /** The secret, for the one print at first start; never logged. */
  secret: string;
  source: 'config' | 'file' | 'created';
  path: string;
  /** False when the token was revoked through the API: it stays revoked. */
  active: boolean;
}

function checked(secret: string, where: string): string {
  if (secret.length < MIN_LENGTH || /\s/.test(secret)) {
    throw new ConfigError([`${where}: an admin token is one word of at least ${MIN_LENGTH} characters`]);
  }
  return secret;
}

function readSecret(path: string): string | null {
  if (!existsSync(path)) return null;
  try {
    return checked(readFileSync(path, 'utf8').trim(), `admin token file ${path}`);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError([
      `admin token file ${path} cannot be read (${String(err)}); run as its owner, or set ACKCRAWL_ADMIN_TOKEN`,
    ]);
  }
}

/**
 * The first admin token, so that someone can make the others: ACKCRAWL_ADMIN_TOKEN if set, else
 * the one in `<dataDir>/admin-token`, else a new one written there (atomically, 0600) at first
 * start. Its SHA-256 is stored as a token with the admin scope, once per secret: a bootstrap token
 * revoked through the API is not brought back at the next start, and a new ACKCRAWL_ADMIN_TOKEN
 * revokes the bootstrap tokens before it.
 */
export async function bootstrapAdminToken(deps: {
  tokens: TokenRepository;
  dataDir: string;
  configured: string | undefined;
  now: () => number;
  newId: () => string;
  logger: Logger;
}): Promise<BootstrapResult> {
  const path = join(resolve(deps.dataDir), ADMIN_TOKEN_FILE);
  let secret: string;
  let source: BootstrapResult['source'];
  if (deps.configured !== undefined && deps.configured !== '') {
    secret = checked(deps.configured, 'ACKCRAWL_ADMIN_TOKEN');
    source = 'config';
  } else {
    const existing = readSecret(path);
    if (existing !== null) {
      secret = existing;
      source = 'file';
    } else {
      const fresh = generateSecret();
      // Another master starting on the same folder may win the race: then its token is the one.
      const created = createFileAtomic(path, `${fresh}\n`, { mode: 0o600 });
      secret = created ? fresh : (readSecret(path) ?? fresh);
      source = created ? 'created' : 'file';
    }
  }
  const hash = hashSecret(secret);
  if ((await deps.tokens.findByHash(hash)) !== null) return { secret, source, path, active: true };
  const now = deps.now();
  try {
    const row = await deps.tokens.create({
      id: deps.newId(),
      name: BOOTSTRAP_TOKEN_NAME,
      scopes: ['admin'],
      hash,
      createdAt: now,
      revokedAt: null,
      lastUsedAt: null,
    });
    await revokeOtherBootstrapTokens(deps.tokens, row.id, now);
    return { secret, source, path, active: true };
  } catch (err) {
    if (!isConflict(err)) throw err;
    deps.logger.warn(
      { path: source === 'config' ? undefined : path },
      'the bootstrap admin token was revoked through the API and stays revoked; set another ACKCRAWL_ADMIN_TOKEN, or delete the admin-token file, for a new one',
    );
    return { secret, source, path, active: false };
  }
}

async function revokeOtherBootstrapTokens(tokens: TokenRepository, keep: string, at: number): Promise<void> {
  let after: string | null = null;
  do {
    const page = await tokens.list({ limit: 500, after });
    for (const token of page.items) {
      if (token.id !== keep && token.name === BOOTSTRAP_TOKEN_NAME && token.revokedAt === null) {
        await tokens.revoke(token.id, at);
      }
    }
    after = page.next;
  } while (after !== null);
}
