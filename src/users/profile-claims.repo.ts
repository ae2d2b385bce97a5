// What the OpenID scopes may release about an account (UserInfo and ID tokens): its display name,
// profile attributes, identifiers (primary ones first) and when its profile last changed.
import { maybeOne, type Queryable } from '../platform/db/db.ts';

export interface ProfileClaimsRecord {
  display_name: string | null;
  /** When the profile last changed (OIDC Core 5.1), not when the account row did: a sign-in moves that. */
  updated_at: number;
  /** Profile attributes (users.attributes); pg hands jsonb over parsed, PGlite may as text. */
  attributes: Record<string, unknown> | string | null;
  identifiers: { type: 'email' | 'username' | 'phone'; value: string; verified: boolean }[] | string | null;
}

/** The account's profile and identifiers, primary ones first; null when the user is gone. */
export const findProfileClaims = (q: Queryable, realmId: string, userId: string) =>
  maybeOne<ProfileClaimsRecord>(
    q,
    `select u.display_name, floor(extract(epoch from u.profile_updated_at))::float8 as updated_at, u.attributes,
       (select json_agg(json_build_object('type', i.type, 'value', i.value, 'verified', i.verified)
                        order by i.is_primary desc, i.created_at, i.id)
          from user_identifiers i where i.realm_id = u.realm_id and i.user_id = u.id) as identifiers
     from users u where u.realm_id = $1 and u.id = $2`,
    [realmId, userId],
  );
