// Who a SAML service provider knows an account by (docs/saml-idp.md): the NameID of a Response,
// its attributes, and the record that an SSO session signed in to the SP with it, which single
// logout reads.
import { randomBytes } from 'node:crypto';
import type { Tx } from '../platform/db/db.ts';
import { many, maybeOne } from '../platform/db/db.ts';
import { NAME_ID_FORMAT_URI } from './saml-xml.ts';

export interface NameId {
  format: string;
  value: string;
}

/** The NameID in the SP's format; null when the account has nothing to fill it (no email). */
export async function nameIdFor(
  tx: Tx,
  realmId: string,
  clientId: string,
  userId: string,
  format: string,
  claims: Record<string, unknown>,
): Promise<NameId | null> {
  if (format === 'email') {
    return typeof claims.email === 'string'
      ? { format: NAME_ID_FORMAT_URI.email, value: claims.email }
      : null;
  }
  if (format === 'transient')
    return { format: NAME_ID_FORMAT_URI.transient, value: `_${randomBytes(20).toString('hex')}` };
  // persistent: one random value per SP and account, kept (saml_subjects, migration 0052).
  await tx.query(
    `insert into saml_subjects (realm_id, client_id, user_id, name_id, created_at)
     values ($1, $2, $3, $4, now()) on conflict (realm_id, client_id, user_id) do nothing`,
    [realmId, clientId, userId, randomBytes(24).toString('base64url')],
  );
  const row = await maybeOne<{ name_id: string }>(
    tx,
    'select name_id from saml_subjects where realm_id = $1 and client_id = $2 and user_id = $3',
    [realmId, clientId, userId],
  );
  return row ? { format: NAME_ID_FORMAT_URI.persistent, value: row.name_id } : null;
}

/** The session signed in to this SP with this NameID (the latest Response's, for a transient one). */
export async function recordParticipant(
  tx: Tx,
  realmId: string,
  sessionId: string,
  clientId: string,
  userId: string,
  nameId: NameId,
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into saml_session_participants (realm_id, session_id, client_id, user_id, name_id, name_id_format,
       created_at) values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (realm_id, session_id, client_id)
     do update set name_id = excluded.name_id, name_id_format = excluded.name_id_format`,
    [realmId, sessionId, clientId, userId, nameId.value, nameId.format, now],
  );
}

/** What a SAML client's assertions carry: profile attributes, and groups and roles under names. */
export interface SpAttributes {
  attributes: string[];
  groups_attribute: string | null;
  roles_attribute: string | null;
}

/** The saml_clients columns a Response is built from. */
export interface SpRow extends SpAttributes {
  entity_id: string;
  name_id_format: string;
  encryption_certificate: string | null;
}

/**
 * The attribute statement's values. Groups: the realm groups the account is a direct member of,
 * and those of the organization signed in to. Roles: roles assigned to the account or to those
 * groups for the realm or that organization, in force now and without conditions.
 */
export async function attributesFor(
  tx: Tx,
  realmId: string,
  signin: { user_id: string; org_id: string | null },
  sp: SpAttributes,
  claims: Record<string, unknown>,
  now: Date,
): Promise<Record<string, string[]>> {
  const attributes: Record<string, string[]> = {};
  for (const a of sp.attributes) {
    const v = a === 'organization' ? signin.org_id : claims[a];
    if (typeof v === 'string' && v !== '') attributes[a] = [v];
  }
  if (sp.groups_attribute === null && sp.roles_attribute === null) return attributes;
  const groups = await many<{ id: string; name: string }>(
    tx,
    `select g.id, g.name from group_members m join groups g on g.realm_id = m.realm_id and g.id = m.group_id
      where m.realm_id = $1 and m.subject_type = 'user' and m.subject_id = $2
        and (g.organization_id is null or g.organization_id = $3)
      order by g.name, g.id`,
    [realmId, signin.user_id, signin.org_id],
  );
  if (sp.groups_attribute !== null && groups.length > 0)
    attributes[sp.groups_attribute] = [...new Set(groups.map((g) => g.name))];
  if (sp.roles_attribute !== null) {
    const roles = await many<{ name: string }>(
      tx,
      `select distinct r.name from role_assignments a join roles r on r.realm_id = a.realm_id and r.id = a.role_id
        where a.realm_id = $1 and a.conditions is null
          and ((a.subject_type = 'user' and a.subject_id = $2) or (a.subject_type = 'group' and a.subject_id = any($3::text[])))
          and (a.scope_type = 'realm' or (a.scope_type = 'organization' and a.scope_id = $4))
          and (a.valid_from is null or a.valid_from <= $5) and (a.expires_at is null or a.expires_at > $5)
        order by r.name`,
      [realmId, signin.user_id, groups.map((g) => g.id), signin.org_id ?? '', now],
    );
    if (roles.length > 0) attributes[sp.roles_attribute] = roles.map((r) => r.name);
  }
  return attributes;
}
