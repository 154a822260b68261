import { z } from 'zod';
import { userRoleSchema } from '../../contracts/roles';
import { API_VERSION, listEnvelope, PAGE_SIZE } from '../../domain/envelope';
import { listSchema, paginationQuery } from '../../contracts/envelope';
import { auditTokenChange, createToken, listTokens, revokeToken, type TokenInfo } from '../../store/tokens';
import { auditSource, forgetToken } from '../auth';
import { conflict, notFound } from '../errors';
import { nonBlank, route } from '../route';

const tokenInfoSchema = z.object({
  id: z.string(),
  user: z.string(),
  role: userRoleSchema,
  createdAt: z.string().datetime(),
  lastUsedAt: z.string().datetime().optional(),
  revoked: z.boolean(),
});
const tokenSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('Token'),
  metadata: tokenInfoSchema,
  token: z.string(),
});

/** Who the calling token is: the console and `foghorn login` ask it to know what to offer. */
const identitySchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('Identity'),
  user: z.string(),
  role: userRoleSchema,
});

const view = (t: TokenInfo) => ({
  ...t,
  createdAt: t.createdAt.toISOString(),
  lastUsedAt: t.lastUsedAt?.toISOString(),
});

/** Token management over the API (admin only, DESIGN §5). Token values are shown once, at creation. */
export function tokenRoutes(basePath: string) {
  return [
    route({
      method: 'get',
      path: '/whoami',
      summary: "The calling token's user and role (what the console shows and offers)",
      tag: 'Tokens',
      role: 'viewer',
      responses: { 200: { description: 'Identity', schema: identitySchema } },
      handler: async ({ principal }) => ({
        body: { apiVersion: API_VERSION, kind: 'Identity', user: principal.user, role: principal.role },
      }),
    }),
    route({
      method: 'post',
      path: '/tokens',
      summary: 'Create an API token (shown once)',
      tag: 'Tokens',
      role: 'admin',
      body: z.object({ user: nonBlank(200), role: userRoleSchema }).strict(),
      responses: { 201: { description: 'created', schema: tokenSchema } },
      handler: async ({ body, req }) => {
        const { token, ...info } = await createToken(body.user, body.role);
        await auditTokenChange('token.create', info, auditSource(req));
        return {
          status: 201,
          headers: { Location: `${basePath}/tokens/${info.id}` },
          body: { apiVersion: API_VERSION, kind: 'Token', metadata: view(info), token },
        };
      },
    }),
    route({
      method: 'get',
      path: '/tokens',
      summary: 'List API tokens (never their values)',
      tag: 'Tokens',
      role: 'admin',
      query: paginationQuery(PAGE_SIZE.max, PAGE_SIZE.default),
      responses: { 200: { description: 'tokens', schema: listSchema('TokenList', tokenInfoSchema) } },
      handler: async ({ query }) => {
        const { items, totalCount } = await listTokens(query.page, query.pageSize);
        return { body: listEnvelope('TokenList', items.map(view), totalCount, query.page, query.pageSize) };
      },
    }),
    route({
      method: 'delete',
      path: '/tokens/{id}',
      summary: 'Revoke an API token',
      tag: 'Tokens',
      role: 'admin',
      kind: 'Token',
      responses: {
        204: { description: 'revoked (revoking twice is fine)' },
        409: { description: 'Token in use: the token making the call cannot revoke itself' },
      },
      handler: async ({ params, principal, req }) => {
        // Revoking the token you call with would lock you out mid-request (for the seeded admin
        // token, until someone runs `foghorn token create`): another admin token, or the CLI, does it.
        if (params.id === principal.tokenId)
          throw conflict(
            'Token in use',
            'a token cannot revoke itself; use another admin token or `foghorn token revoke`',
          );
        const info = await revokeToken(params.id);
        if (!info) throw notFound('Token', params.id);
        forgetToken(info.id);
        await auditTokenChange('token.revoke', info, auditSource(req));
        return { status: 204 };
      },
    }),
  ];
}
