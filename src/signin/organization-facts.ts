// What the organization stages of a sign-in need to know (spec doc 1, evaluation order steps 2, 7
// and 8; doc 2, Organization membership), read in one statement: whether a requested resource
// requires an organization, the organization the transaction names, and the account's choices.

import { jsonColumn, one, type Queryable } from '../platform/db/db.ts';
import { liveMembershipSql } from '../roles/live-membership.ts';
import type { SigninTx } from './transaction.ts';

export interface OrgFacts {
  id: string;
  slug: string;
  displayName: string;
  /** The organization's state is active. */
  active: boolean;
  /** The account holds an active membership in it. */
  member: boolean;
  mfaRequired: boolean;
  requireSso: boolean;
}

export interface OrganizationFacts {
  /** A requested resource has requires_organization. */
  required: boolean;
  /**
   * The organization the transaction names: the one chosen in the select_organization step, else
   * the one the start parameter names (by id or slug). Null when it names none, or none exists.
   */
  named: OrgFacts | null;
  /** The account's active memberships in active organizations: what select_organization offers. */
  choices: OrgFacts[];
}

export const NO_ORGANIZATION_FACTS: OrganizationFacts = { required: false, named: null, choices: [] };

interface OrgJson {
  id: string;
  slug: string;
  display_name: string;
  state: string;
  member: boolean;
  policy: { mfa_required?: unknown; require_sso?: unknown } | null;
}

const ORG_JSON = (alias: string, member: string) =>
  `json_build_object('id', ${alias}.id, 'slug', ${alias}.slug, 'display_name', ${alias}.display_name,
     'state', ${alias}.state, 'policy', ${alias}.policy, 'member', ${member})`;

// $1 realm, $2 requested audiences, $3 chosen organization id, $4 start parameter, $5 user id, $6 now.
// The start parameter matches an id before a slug, so a slug that looks like another
// organization's id cannot take its place.
const SQL = `
select
  exists (select 1 from resources r where r.realm_id = $1 and r.audience = any ($2::text[])
           and r.requires_organization) as required,
  (select ${ORG_JSON(
    'o',
    `($5::text is not null and exists (select 1 from memberships m where m.realm_id = o.realm_id
       and m.organization_id = o.id and m.user_id = $5 and ${liveMembershipSql('m', '$6')}))`,
  )}
     from organizations o
    where o.realm_id = $1 and o.state <> 'deleted'
      and (o.id = coalesce($3::text, $4::text) or ($3::text is null and lower(o.slug) = lower($4::text)))
    order by (o.id = coalesce($3::text, $4::text)) desc limit 1) as named,
  (select coalesce(json_agg(${ORG_JSON('o', 'true')} order by lower(o.display_name), o.id), '[]')
     from memberships m join organizations o on o.realm_id = m.realm_id and o.id = m.organization_id
    where $5::text is not null and m.realm_id = $1 and m.user_id = $5 and ${liveMembershipSql('m', '$6')}
      and o.state = 'active') as choices`;

const parsed = jsonColumn;

const fromJson = (o: OrgJson): OrgFacts => ({
  id: o.id,
  slug: o.slug,
  displayName: o.display_name,
  active: o.state === 'active',
  member: o.member === true,
  mfaRequired: o.policy?.mfa_required === true,
  requireSso: o.policy?.require_sso === true,
});

/** Most sign-ins neither name an organization nor ask for a resource: they need no statement here. */
export const organizationFactsNeeded = (t: SigninTx): boolean =>
  t.resources.length > 0 || t.organization !== null || t.organizationId !== null;

export async function loadOrganizationFacts(
  q: Queryable,
  t: SigninTx,
  now: Date,
): Promise<OrganizationFacts> {
  if (!organizationFactsNeeded(t)) return NO_ORGANIZATION_FACTS;
  const r = await one<{ required: boolean; named: unknown; choices: unknown }>(q, SQL, [
    t.realmId,
    t.resources,
    t.organizationId,
    t.organization,
    t.userId,
    now,
  ]);
  const named = r.named === null ? null : parsed<OrgJson>(r.named);
  return {
    required: r.required,
    named: named ? fromJson(named) : null,
    choices: parsed<OrgJson[]>(r.choices).map(fromJson),
  };
}
