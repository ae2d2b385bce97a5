// The SQL of each live check (doc 2, Revocation exposure), shared by the two statement builders:
// token-liveness.ts (roles and decisions, batches) and lean-liveness.ts (one token without roles).
// `p` gives the placeholder of a named parameter; each builder numbers them its own way. The
// aliases are the builders' joins: c (the token's client), s (its session), org (its org_id).
import { liveMembershipSql } from '../roles/live-membership.ts';
import { liveSessionSql } from '../sessions/index.ts';

export type CheckParam =
  | 'realm'
  | 'subject'
  | 'client'
  | 'jti'
  | 'session'
  | 'audience'
  | 'resource'
  | 'now'
  | 'introspectorRow'
  | 'callerClient'
  | 'org'
  | 'supportGrant'
  | 'grantClient'
  | 'key';

type P = (name: CheckParam) => string;

/** What the checks read of token-liveness.ts's TokenFacts (there, each member is explained). */
export interface CheckFacts {
  realmId: string;
  subject: string;
  clientId: string;
  tokenId: string;
  sessionId: string | null;
  audience: string;
  resourceId: string | null;
  exchanged: boolean;
  grantClientId?: string | null;
  orgId?: string | null;
  introspectorRowId?: string | null;
  callerClientId?: string | null;
  supportGrantId?: string | null;
  /**
   * The kid of the key that signed a JWT (null for an opaque token): the key must still be
   * published (pending, active or retiring), so an emergency rotation ends its tokens at its commit
   * on every server, not when each server's key-set cache expires.
   */
  keyId?: string | null;
}

/** Each check parameter's value for this token. */
export const checkValues = (f: CheckFacts, now: Date): Record<CheckParam, unknown> => ({
  realm: f.realmId,
  subject: f.subject,
  client: f.clientId,
  jti: f.tokenId,
  session: f.sessionId,
  audience: f.audience,
  resource: f.resourceId,
  now,
  introspectorRow: f.introspectorRowId ?? null,
  callerClient: f.callerClientId ?? null,
  org: f.orgId ?? null,
  supportGrant: f.supportGrantId ?? null,
  // The client whose user grant must be live: the token's own, or after an exchange the one the
  // subject token was issued to (doc 2, Revocation exposure: an active grant for both kinds).
  grantClient: f.exchanged ? (f.grantClientId ?? null) : f.clientId,
  key: f.keyId ?? null,
});

/** The session row `s` is the subject's and live. */
export const sessionLiveSql = (p: P): string =>
  `(s.user_id = ${p('subject')} and ${liveSessionSql('s', p('now'))})`;

/** The signing key `key` names is still published (not compromised, not retired). */
export const keyLiveSql = (p: P): string =>
  `exists (select 1 from signing_keys k where k.realm_id = ${p('realm')} and k.kid = ${p('key')}
       and k.state in ('pending', 'active', 'retiring'))`;

export const jtiRevokedSql = (p: P): string =>
  `exists (select 1 from token_revocations t where t.realm_id = ${p('realm')} and t.jti = ${p('jti')})`;

/** The user's grant to the grant client, in the token's organization (or outside any). */
export const userGrantSql = (p: P): string => `exists (select 1 from oauth_grants g
     where g.realm_id = ${p('realm')} and g.user_id = ${p('subject')} and g.client_id = ${p('grantClient')}
       and g.revoked_at is null and g.org_id is not distinct from ${p('org')}::text)`;

/** The exchanging client `c` still holds a grant for the resource `resourceId` names. */
export const exchangeGrantSql = (
  p: P,
  resourceId: string,
): string => `exists (select 1 from client_resource_grants x
     where x.realm_id = ${p('realm')} and x.client_row_id = c.id and x.resource_id = ${resourceId})`;

/** The client row `introspector` names is registered as an introspector of the resource. */
export const introspectorSql = (p: P, resourceId: string, introspector: string): string =>
  `exists (select 1 from resource_introspectors i
     where i.realm_id = ${p('realm')} and i.resource_id = ${resourceId} and i.client_row_id = ${introspector})`;

/** The user subject's membership in the organization row `org` is live. */
export const orgMembershipSql = (
  p: P,
): string => `exists (select 1 from memberships m where m.realm_id = ${p('realm')}
       and m.organization_id = org.id and m.user_id = ${p('subject')} and ${liveMembershipSql('m', p('now'))})`;

/**
 * The support grant a token acts under, as JSON with `live` and what the answer shows
 * (docs/support-access.md).
 */
export function supportGrantSql(p: P): string {
  return `(select json_build_object('live',
      sx.state = 'active' and sx.expires_at > ${p('now')} and sx.target_user_id = ${p('subject')} and sx.client_id = ${p('client')}
        and sx.organization_id = ${p('org')}::text and sr.audience = ${p('audience')}
        and sr.impersonation_enabled and sr.verification_mode = 'strict_online'
        and coalesce(sr.impersonation_policy -> 'supportClientIds', '[]'::jsonb) @> to_jsonb(sx.client_id)
        and su.state = 'active',
      'actor_user_id', sx.actor_user_id, 'write', sx.write,
      'impersonation_enabled', sr.impersonation_enabled, 'policy', sr.impersonation_policy)
    from support_grants sx join resources sr on sr.realm_id = sx.realm_id and sr.id = sx.resource_id
      join users su on su.realm_id = sx.realm_id and su.id = sx.actor_user_id
    where sx.realm_id = ${p('realm')} and sx.id = ${p('supportGrant')})`;
}
