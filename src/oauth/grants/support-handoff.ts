// The support handoff at the token endpoint (docs/support-access.md): the support tool named in a
// support grant redeems the grant's one-time handoff code with an RFC 8693 token exchange and gets
// one access token for the grant's resource, with the customer as sub, the support user as
// act.sub and the grant named in support_grant_id. No refresh token, no ID token; the token never
// outlives the grant. A replayed code ends the grant (like a replayed authorization code,
// decision D3).
import { recordAudit } from '../../audit/index.ts';
import { oauthError } from '../../kernel/oauth-error.ts';
import { maybeOne, type Tx } from '../../platform/db/db.ts';
import { findResourceByAudience } from '../../resources/index.ts';
import { effectiveRolesSql, permissionsOf, type RoleHolding } from '../../roles/effective-roles.ts';
import { lockGrantByHandoff, markHandoffUsed } from '../../support-grants/index.ts';
import { endSupportGrants } from '../../support-grants/support-end.ts';
import {
  handoffDigest,
  isHandoffCodeShape,
  SUPPORT_HANDOFF_TOKEN_TYPE,
  type SupportGrantRow,
  stateOf,
} from '../../support-grants/support-grant.ts';
import { userMayActIn } from '../org-context.ts';
import { issueAccessToken } from '../token-issuer.ts';
import {
  ACCESS_TOKEN_TYPE,
  accessTokenResponse,
  exchangeTarget,
  type GrantContext,
  type TokenResponse,
} from './grant-context.ts';

export { SUPPORT_HANDOFF_TOKEN_TYPE };

const IMPERSONATE = 'support.impersonate';
/**
 * The support user's realm roles are re-read at redemption, with no session to judge assignment
 * conditions by: MFA holds (the grant was made from an administration session, which needs MFA),
 * authentication age is unknown, so holdings limited by max_auth_age_seconds give nothing.
 */
const ACTOR_ASSURANCE = { mfa: true, authAgeSeconds: null } as const;

type Outcome = { error: string; target?: true; scope?: true } | { response: TokenResponse };

export async function supportHandoffGrant(g: GrantContext, code: string): Promise<TokenResponse> {
  const { audience, requestedScopes } = exchangeTarget(g);
  if (!isHandoffCodeShape(code)) throw oauthError.invalidGrant('unknown handoff code');

  const outcome: Outcome = await g.app.db.tx(async (tx) => {
    const grant = await lockGrantByHandoff(tx, g.realm.id, handoffDigest(code));
    // Another client's code is not this client's to spend or to end.
    if (!grant || grant.client_id !== g.caller.client.client_id) return { error: 'unknown handoff code' };
    if (grant.handoff_used_at !== null) {
      await replayed(g, tx, grant);
      return { error: 'the handoff code was already used' };
    }
    if (new Date(grant.handoff_expires_at).getTime() <= g.now.getTime())
      return { error: 'the handoff code has expired' };
    if (stateOf(grant, g.now) !== 'active') return { error: 'the support grant has ended' };
    if (audience !== grant.audience) return { error: 'the resource is not the grant’s', target: true };
    if (requestedScopes?.some((s) => !grant.scopes.includes(s)))
      return { error: 'scope outside the support grant', scope: true };

    const resource = await findResourceByAudience(tx, g.realm, g.settings.publicOrigin, grant.audience);
    const policy = resource?.impersonationPolicy;
    if (
      resource?.state !== 'active' ||
      !resource.impersonationEnabled ||
      resource.verificationMode !== 'strict_online' ||
      !policy?.supportClientIds.includes(grant.client_id)
    )
      return { error: 'the resource no longer accepts this support access', target: true };
    const people = await maybeOne<{
      target: string | null;
      actor: string | null;
      actor_roles: RoleHolding[] | null;
    }>(
      tx,
      `select (select state from users where realm_id = $1 and id = $2) as target,
              (select state from users where realm_id = $1 and id = $3) as actor,
              ${effectiveRolesSql({
                realmId: '$1',
                subjectType: "'user'",
                subjectId: '$3',
                now: '$4',
                orgId: 'null::text',
                projectId: 'null::text',
              })} as actor_roles`,
      [g.realm.id, grant.target_user_id, grant.actor_user_id, g.now],
    );
    if (people?.target !== 'active' || people.actor !== 'active')
      return { error: 'the support grant has ended' };
    if (!permissionsOf(people.actor_roles ?? [], ACTOR_ASSURANCE).has(IMPERSONATE))
      return { error: 'the support user no longer holds support.impersonate' };
    // Grants made before the organization became mandatory have none: they are never redeemed.
    if (
      grant.organization_id === null ||
      !(await userMayActIn(tx, g.realm.id, grant.organization_id, grant.target_user_id, g.now))
    )
      return { error: 'the organization membership is not active' };
    // A token needs at least one whole second of life before the grant ends; a grant redeemed in
    // its last second has none to give, so nothing is spent or issued.
    const notAfter = Math.floor(new Date(grant.expires_at).getTime() / 1000);
    if (notAfter - Math.floor(g.now.getTime() / 1000) < 1)
      return { error: 'the support grant is about to expire' };

    const scopes = requestedScopes ?? grant.scopes;
    await markHandoffUsed(tx, g.realm.id, grant.id, g.now);
    const access = await issueAccessToken(
      tx,
      g.settings,
      g.signer,
      {
        realm: g.realm,
        clientId: grant.client_id,
        subject: grant.target_user_id,
        target: {
          resource,
          grant: {
            clientRowId: g.caller.client.id,
            resourceId: resource.id,
            allowedScopes: grant.scopes,
            subjectTypes: ['user'],
            exchangePolicy: null,
          },
        },
        scopes,
        // The customer did not authenticate: the token carries no auth_time, acr or amr.
        authentication: null,
        act: { sub: grant.actor_user_id },
        orgId: grant.organization_id,
        notAfterSeconds: notAfter,
        supportGrantId: grant.id,
      },
      g.now,
    );
    await recordAudit(
      tx,
      {
        realmId: g.realm.id,
        type: 'support.grant.redeemed',
        category: 'security',
        actor: { type: 'user', id: grant.actor_user_id },
        subject: { type: 'user', id: grant.target_user_id },
        target: { type: 'support_grant', id: grant.id },
        ...(grant.organization_id ? { orgId: grant.organization_id } : {}),
        correlationId: g.correlationId,
        data: { client_id: grant.client_id, jti: access.claims.jti, scopes },
      },
      g.now,
    );
    return { response: { ...accessTokenResponse(access, scopes), issued_token_type: ACCESS_TOKEN_TYPE } };
  });
  if ('response' in outcome) return outcome.response;
  if (outcome.target) throw oauthError.invalidTarget(outcome.error);
  if (outcome.scope) throw oauthError.invalidScope(outcome.error);
  throw oauthError.invalidGrant(outcome.error);
}

/** A second redemption: someone else may hold the code, so the grant ends (and is audited). */
async function replayed(g: GrantContext, tx: Tx, grant: SupportGrantRow): Promise<void> {
  await endSupportGrants(
    tx,
    g.realm.id,
    { id: grant.id },
    'handoff_replayed',
    { type: 'client', id: g.caller.client.client_id },
    g.now,
    g.correlationId,
  );
  await recordAudit(
    tx,
    {
      realmId: g.realm.id,
      type: 'support.handoff.replayed',
      category: 'security',
      outcome: 'failure',
      actor: { type: 'client', id: g.caller.client.client_id },
      subject: { type: 'user', id: grant.target_user_id },
      target: { type: 'support_grant', id: grant.id },
      ...(grant.organization_id ? { orgId: grant.organization_id } : {}),
      correlationId: g.correlationId,
      signal: 'impersonation_denied',
      data: { actor_user_id: grant.actor_user_id },
    },
    g.now,
  );
}
