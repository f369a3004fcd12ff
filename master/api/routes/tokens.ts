import { AppError } from '../../../shared/errors.js';
import type { MasterAppDeps } from '../deps.js';
import { generateSecret, hashSecret } from '../auth/secrets.js';
import { route, type RouteSpec } from '../route-spec.js';
import { idParams, pageOf, pageQuery } from '../schemas/common.js';
import { createdTokenSchema, tokenCreateSchema, tokenSchema, tokenView } from '../schemas/token.js';

/** People's API tokens: made and revoked here, by admins only. */
export function tokenRoutes(deps: MasterAppDeps): RouteSpec[] {
  const { tokens } = deps.store;
  return [
    route({
      method: 'post',
      path: '/tokens',
      operationId: 'createToken',
      summary: 'Make a token (its secret is in this answer only)',
      tag: 'tokens',
      scope: 'admin',
      body: tokenCreateSchema,
      responses: { 201: { description: 'The token, with its secret.', schema: createdTokenSchema } },
      async handle({ body }) {
        const secret = generateSecret();
        const row = await tokens.create({
          id: deps.newId(),
          name: body.name,
          scopes: [...new Set(body.scopes)],
          hash: hashSecret(secret),
          createdAt: deps.clock.now(),
          revokedAt: null,
          lastUsedAt: null,
        });
        deps.logger.info({ tokenId: row.id, name: row.name, scopes: row.scopes }, 'API token created');
        return { status: 201, body: { ...tokenView(row), secret } };
      },
    }),
    route({
      method: 'get',
      path: '/tokens',
      operationId: 'listTokens',
      summary: 'The tokens (never their secrets), revoked ones included, paged',
      tag: 'tokens',
      scope: 'admin',
      query: pageQuery,
      responses: { 200: { description: 'A page of tokens.', schema: pageOf(tokenSchema) } },
      async handle({ query }) {
        const page = await tokens.list({ limit: query.limit, after: query.after ?? null });
        return { status: 200, body: { items: page.items.map(tokenView), next: page.next } };
      },
    }),
    route({
      method: 'delete',
      path: '/tokens/:id',
      operationId: 'revokeToken',
      summary: 'Revoke a token: it is refused from now on',
      tag: 'tokens',
      scope: 'admin',
      params: idParams,
      lookup: true,
      responses: { 204: { description: 'Revoked.' } },
      async handle({ params }) {
        if (!(await tokens.revoke(params.id, deps.clock.now()))) {
          throw new AppError('TOKEN_NOT_FOUND', `no token ${params.id} that is not revoked`);
        }
        deps.logger.info({ tokenId: params.id }, 'API token revoked');
        return { status: 204 };
      },
    }),
  ];
}
