import type { Context } from 'koa';
import { AppError } from '../../../shared/errors.js';
import { bearerToken } from '../../../shared/http/bearer.js';
import { hashSecret, sameHash } from './secrets.js';

/**
 * The agent credential on the routes host agents call: its SHA-256 compared in constant time with
 * the one the master holds (the master keeps no agent secret in memory or SQL). People's tokens
 * and the cluster token are refused here like any other unknown token.
 */
export function requireAgent(ctx: Context, agentTokenHash: string | undefined): void {
  const secret = bearerToken(ctx.get('authorization') || undefined);
  if (secret === null) {
    throw new AppError(
      'UNAUTHORIZED',
      'the agent credential is required (Authorization: Bearer <agent token>)',
    );
  }
  if (agentTokenHash === undefined || !sameHash(agentTokenHash, hashSecret(secret))) {
    throw new AppError('UNAUTHORIZED', 'the agent credential is not valid (see ACKCRAWL_AGENT_TOKEN)');
  }
}
