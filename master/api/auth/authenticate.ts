import type { Context } from 'koa';
import { AppError } from '../../../shared/errors.js';
import { bearerToken } from '../../../shared/http/bearer.js';
import type { Logger } from '../../../shared/logger.js';
import type { TokenRepository, TokenRow, TokenScope } from '../../../shared/ports/sql-store.js';
import { hashSecret, sameHash } from './secrets.js';
import { scopeAllows } from './scopes.js';

/** lastUsedAt is written at most this often per token, so reads do not all become writes. */
const TOUCH_EVERY_MS = 60_000;

export interface Authenticator {
  /** The caller's token, if it has `scope`; else 401 (no valid token) or 403 (not this scope). */
  require(ctx: Context, scope: TokenScope): Promise<TokenRow>;
}

/**
 * People's bearer tokens, looked up by their SHA-256 (the store never holds a secret) and the
 * digest compared again in constant time. The cluster token of crawlers and agents is not among
 * them, so it is refused here like any other unknown token.
 */
export function createAuthenticator(deps: {
  tokens: TokenRepository;
  now: () => number;
  logger: Logger;
}): Authenticator {
  return {
    async require(ctx, scope) {
      const secret = bearerToken(ctx.get('authorization') || undefined);
      if (secret === null) {
        throw new AppError('UNAUTHORIZED', 'a bearer token is required (Authorization: Bearer <token>)');
      }
      const hash = hashSecret(secret);
      const token = await deps.tokens.findByHash(hash);
      if (token === null || token.revokedAt !== null || !sameHash(token.hash, hash)) {
        throw new AppError('UNAUTHORIZED', 'the bearer token is not valid (unknown or revoked)');
      }
      if (!scopeAllows(token.scopes, scope)) {
        throw new AppError(
          'FORBIDDEN',
          `this needs a token with the ${scope} scope; this one has ${token.scopes.join(', ')}`,
        );
      }
      const now = deps.now();
      if (token.lastUsedAt === null || now - token.lastUsedAt >= TOUCH_EVERY_MS) {
        deps.tokens
          .touch(token.id, now)
          .catch((err: unknown) =>
            deps.logger.warn({ err, tokenId: token.id }, 'could not record a token use'),
          );
      }
      return token;
    },
  };
}
