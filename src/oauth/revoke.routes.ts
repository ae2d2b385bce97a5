// POST /realms/{realm}/oauth/revoke (RFC 7009; decision D9): a client ends a token it was
// issued. A refresh token ends its whole family; a JWT access token's jti is recorded until the
// token would have expired; an opaque token's record is marked revoked. The live checks (doc 2,
// Revocation exposure) make each inactive from the commit. Tokens that are unknown, invalid,
// already inactive or another client's are answered the same 200 (RFC 7009 section 2.2).
import type { FastifyInstance } from 'fastify';
import { isOpaqueAccessToken, opaqueAccessTokenDigest } from '../access/access-token.ts';
import type { ApiDeps } from '../api/api.deps.ts';
import { authenticateOAuthClient, oauthEndpoint } from '../api/oauth-endpoint.ts';
import { recordAudit } from '../audit/index.ts';
import { singleParam } from '../clients/client-auth-request.ts';
import { issuerOf } from '../kernel/audiences.ts';
import { oauthError } from '../kernel/oauth-error.ts';
import type { Tx } from '../platform/db/db.ts';
import type { RealmRow } from '../realms/index.ts';
import { findFamilyByToken, isRefreshTokenShape, revokeFamily } from '../sessions/index.ts';

const REASON = 'revoked_by_client';

interface Revocation {
  app: ApiDeps;
  realm: RealmRow;
  /** The caller's public client_id: only its own tokens are revoked. */
  clientId: string;
  token: string;
  now: Date;
  correlationId: string;
}

export function registerRevoke(app: FastifyInstance, ctx: ApiDeps): void {
  oauthEndpoint(app, ctx, 'revoke', async (call) => {
    const now = ctx.clock.now();
    // Public clients may revoke their own tokens too (RFC 7009 section 5).
    const { client } = await authenticateOAuthClient(ctx, call, 'revoke', now);
    const token = singleParam(call.form, 'token');
    if (token === null) throw oauthError.invalidRequest('parameter token is required');
    // Every supported type is recognised by its shape, so the hint changes nothing.
    singleParam(call.form, 'token_type_hint');
    await revokeToken({
      app: ctx,
      realm: call.realm,
      clientId: client.client_id,
      token,
      now,
      correlationId: String(call.req.id),
    });
    return call.reply.code(200).send();
  });
}

async function revokeToken(r: Revocation): Promise<void> {
  if (isRefreshTokenShape(r.token)) return r.app.db.tx((tx) => revokeRefreshToken(tx, r));
  if (isOpaqueAccessToken(r.token)) return r.app.db.tx((tx) => revokeOpaqueToken(tx, r));
  return revokeJwt(r);
}

async function revokeRefreshToken(tx: Tx, r: Revocation): Promise<void> {
  const family = await findFamilyByToken(tx, r.realm.id, r.token);
  if (!family || family.client_id !== r.clientId) return;
  if (!(await revokeFamily(tx, r.realm.id, family.id, REASON, r.now))) return;
  await audit(
    tx,
    r,
    { type: 'user', id: family.user_id },
    { token_type: 'refresh_token', family_id: family.id },
  );
}

async function revokeOpaqueToken(tx: Tx, r: Revocation): Promise<void> {
  const revoked = await tx.query<{ jti: string; sub: string }>(
    `update opaque_access_tokens set revoked_at = $4
      where realm_id = $1 and token_digest = $2 and client_id = $3 and revoked_at is null and expires_at > $4
      returning jti, claims->>'sub' as sub`,
    [r.realm.id, opaqueAccessTokenDigest(r.token), r.clientId, r.now],
  );
  const row = revoked.rows[0];
  if (row) await audit(tx, r, null, { token_type: 'access_token', jti: row.jti, sub: row.sub });
}

async function revokeJwt(r: Revocation): Promise<void> {
  // Verified like any other use, so a forged token cannot plant a revocation record.
  const v = await r.app.tokenVerifier.verifyOwnAudience(r.token, {
    realmName: r.realm.name,
    issuer: issuerOf(r.app.config.server.publicOrigin, r.realm.name),
    // The client that holds a DPoP-bound token may revoke it like any other (RFC 7009 needs no proof).
    senderConstrained: true,
  });
  if (!v.ok || v.token.clientId !== r.clientId) return;
  const t = v.token;
  // Kept while any verifier could still accept the token: its expiry plus the clock skew.
  const keepUntil = new Date(t.expiresAt * 1000 + r.app.config.tokens.clockSkewMs);
  await r.app.db.tx(async (tx) => {
    const inserted = await tx.query(
      `insert into token_revocations (realm_id, jti, reason, expires_at, created_at)
       values ($1, $2, $3, $4, $5) on conflict (realm_id, jti) do nothing returning 1`,
      [r.realm.id, t.tokenId, REASON, keepUntil, r.now],
    );
    if (inserted.rows.length === 1) {
      await audit(tx, r, null, { token_type: 'access_token', jti: t.tokenId, sub: t.subject });
    }
  });
}

function audit(
  tx: Tx,
  r: Revocation,
  subject: { type: string; id: string } | null,
  data: Record<string, unknown>,
): Promise<string> {
  return recordAudit(
    tx,
    {
      realmId: r.realm.id,
      type: 'token.revoked',
      category: 'security',
      actor: { type: 'client', id: r.clientId },
      ...(subject ? { subject } : {}),
      correlationId: r.correlationId,
      data: { ...data, client_id: r.clientId, reason: REASON },
    },
    r.now,
  );
}
