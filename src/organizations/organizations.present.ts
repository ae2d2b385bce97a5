// Representations of the organizations API; organization and membership follow the member lists
// of doc 2's export records "organization" and "membership".
import {
  DEFAULT_ORGANIZATION_POLICY,
  type DomainRow,
  type MembershipRoleRow,
  type MembershipRow,
  type OrganizationRow,
  type RequestRow,
} from './organizations.types.ts';

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

export interface OrganizationView {
  org: OrganizationRow;
  domains: DomainRow[];
}

/** The ETag of an organization: its version, bumped by every change. */
export const etagOf = (org: OrganizationRow): string => `"${org.version}"`;

export function presentOrganization({ org, domains }: OrganizationView) {
  return {
    id: org.id,
    slug: org.slug,
    display_name: org.display_name,
    state: org.state,
    locale: org.locale,
    time_zone: org.time_zone,
    metadata: org.metadata,
    contact: org.contact,
    external_id: org.external_id,
    policy: { ...DEFAULT_ORGANIZATION_POLICY, ...org.policy },
    template_name: org.template_name,
    template_version: org.template_version,
    created_at: iso(org.created_at),
    updated_at: iso(org.updated_at),
    domains: domains.map(presentDomain),
  };
}

export const presentDomain = (d: DomainRow) => ({
  domain: d.domain,
  verified: d.verified,
  created_at: iso(d.created_at),
});

export interface MembershipView {
  membership: MembershipRow;
  roles: MembershipRoleRow[];
}

export function presentMembership({ membership: m, roles }: MembershipView) {
  return {
    id: m.id,
    organization_id: m.organization_id,
    user_id: m.user_id,
    state: m.state,
    source: m.source,
    external_id: m.external_id,
    metadata: m.metadata,
    joined_at: iso(m.joined_at),
    expires_at: iso(m.expires_at),
    created_at: iso(m.created_at),
    updated_at: iso(m.updated_at),
    authorization_revision: m.authorization_revision,
    roles: roles.map((r) => ({ id: r.role_id, name: r.name, assignment_id: r.assignment_id })),
  };
}

/** A pending request past its expiry is shown expired before the sweep has recorded it. */
const effectiveState = (r: RequestRow, now: Date) =>
  r.state === 'pending' && new Date(r.expires_at).getTime() <= now.getTime() ? 'expired' : r.state;

/** Both kinds share one shape; an invitation adds what it offers and how often it was sent. */
function presentRequest(r: RequestRow, now: Date, invitation: boolean) {
  return {
    id: r.id,
    organization_id: r.organization_id,
    user_id: r.user_id,
    membership_id: r.membership_id,
    state: effectiveState(r, now),
    ...(invitation
      ? {
          role_ids: r.role_ids,
          message: r.message,
          resend_count: r.resend_count,
          last_sent_at: iso(r.last_sent_at),
        }
      : {}),
    expires_at: iso(r.expires_at),
    decided_at: iso(r.decided_at),
    created_at: iso(r.created_at),
  };
}

export const presentInvitation = (r: RequestRow, now: Date) => presentRequest(r, now, true);

export const presentJoinRequest = (r: RequestRow, now: Date) => presentRequest(r, now, false);
