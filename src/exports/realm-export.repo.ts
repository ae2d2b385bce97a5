// The reads behind the realm data export (spec doc 2, Realm data export): one statement per section
// (and per kind of nested list), each sorted by id. This is a read model over the tables of several
// contexts, like access/: it selects named columns only, so a secret column added to a table later
// never reaches the file by accident.
import type { Queryable } from '../platform/db/db.ts';

type Row = Record<string, unknown>;

const rows = async <R extends Row = Row>(q: Queryable, sql: string, realmId: string): Promise<R[]> =>
  (await q.query<R>(sql, [realmId])).rows;

/** Groups child rows by a key column, keeping the statement's order inside each group. */
export function groupBy<R extends Row>(list: R[], key: string): Map<string, R[]> {
  const out = new Map<string, R[]>();
  for (const r of list) {
    const k = String(r[key]);
    const g = out.get(k);
    if (g) g.push(r);
    else out.set(k, [r]);
  }
  return out;
}

/** Every account that is not deleted. */
export const exportUsers = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select id, state, display_name, attributes, admin_metadata, protected, is_guest, required_actions, created_via,
            last_login_at, created_at, updated_at
       from users where realm_id = $1 and state <> 'deleted' order by id`,
    realmId,
  );

export const exportIdentifiers = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select i.user_id, i.type, i.value, i.verified, i.verified_at, i.is_primary
       from user_identifiers i join users u on u.realm_id = i.realm_id and u.id = i.user_id
      where i.realm_id = $1 and u.state <> 'deleted' order by i.user_id, i.id`,
    realmId,
  );

/** External ids of imported accounts (the readable ones: erasure clears the source id). */
export const exportExternalIds = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select user_id, source_system, source_id from user_external_ids
      where realm_id = $1 and source_id is not null order by user_id, source_system, source_id`,
    realmId,
  );

/** Which credentials each account has: existence only, never the material. */
export const exportCredentialPresence = (q: Queryable, realmId: string) =>
  rows<{ user_id: string; kind: string }>(
    q,
    `select user_id, 'password' as kind from password_credentials where realm_id = $1
     union all select user_id, 'totp' from totp_credentials where realm_id = $1
     union all select user_id, 'hotp' from hotp_credentials where realm_id = $1
     union all select user_id, 'passkey' from webauthn_credentials where realm_id = $1`,
    realmId,
  );

export const exportOrganizations = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select id, contact, created_at, display_name, external_id, locale, metadata, policy, slug, state,
            template_name, template_version, time_zone, updated_at
       from organizations where realm_id = $1 order by id`,
    realmId,
  );

export const exportDomains = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select organization_id, domain, verified, created_at from organization_domains
      where realm_id = $1 order by organization_id, domain`,
    realmId,
  );

/** Memberships that are neither removed nor expired. */
export const exportMemberships = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select id, organization_id, user_id, state, source, external_id, metadata, joined_at, expires_at,
            created_at
       from memberships where realm_id = $1 and state not in ('removed', 'expired') order by id`,
    realmId,
  );

/** Role assignments held through a membership, with the role's name. */
export const exportMembershipRoles = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select a.membership_id, a.role_id, r.name as role
       from role_assignments a join roles r on r.realm_id = a.realm_id and r.id = a.role_id
      where a.realm_id = $1 and a.membership_id is not null order by a.membership_id, a.id`,
    realmId,
  );

export const exportGroups = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select id, organization_id, parent_id, name, description, metadata, external_id, source,
            dynamic_rule, created_at
       from groups where realm_id = $1 order by id`,
    realmId,
  );

export const exportGroupMembers = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select group_id, subject_type, subject_id from group_members
      where realm_id = $1 order by group_id, subject_type, subject_id`,
    realmId,
  );

/** Role assignments not held through a membership. */
export const exportRoleAssignments = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select a.id, a.role_id, r.name as role, a.subject_type, a.subject_id, a.scope_type, a.scope_id,
            a.conditions, a.valid_from, a.expires_at, a.source, a.reason, a.created_at
       from role_assignments a join roles r on r.realm_id = a.realm_id and r.id = a.role_id
      where a.realm_id = $1 and a.membership_id is null order by a.id`,
    realmId,
  );

export const exportProjects = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select id, name, description, environment, state, owner_user_id, owner_organization_id, created_at
       from projects where realm_id = $1 order by id`,
    realmId,
  );

/** Service principals that are not deleted. */
export const exportServicePrincipals = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select id, name, description, owner_user_id, owner_organization_id, state, allowed_organization_ids,
            is_agent, created_at
       from service_principals where realm_id = $1 and state <> 'deleted' order by id`,
    realmId,
  );

/** Webhook subscriptions without their signing secrets. */
export const exportWebhooks = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select id, organization_id, name, destination_url, event_types, state, allow_private_network,
            payload_form, owner_user_id, created_at
       from webhook_subscriptions where realm_id = $1 and deleted_at is null order by id`,
    realmId,
  );

/** Hooks without their signing secrets. */
export const exportHooks = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select id, name, kind, url, timeout_ms, failure_mode, client_ids, allow_private_network, state,
            owner_user_id, created_at
       from hooks where realm_id = $1 order by id`,
    realmId,
  );

/** Identity-provider connections without their client secrets (sealed or referenced). */
export const exportIdentityProviders = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select id, alias, organization_id, display_name, kind, adapter, state, issuer, config,
            jit_provisioning, jit_default_role_id, linking_policy, trust_upstream_mfa, claim_mapping,
            owner_user_id, created_at
       from identity_providers where realm_id = $1 order by id`,
    realmId,
  );

/** The upstream identities linked to accounts that are not deleted. */
export const exportFederatedIdentities = (q: Queryable, realmId: string) =>
  rows(
    q,
    `select l.user_id, l.provider_id, l.upstream_issuer, l.upstream_subject
       from linked_identities l join users u on u.realm_id = l.realm_id and u.id = l.user_id
      where l.realm_id = $1 and u.state <> 'deleted' order by l.user_id, l.id`,
    realmId,
  );
