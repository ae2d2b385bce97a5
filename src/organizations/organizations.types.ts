// Rows and call context of the organizations context (spec doc 1, "What the service does" 1;
// doc 2, export records "organization" and "membership", Organization membership).

import type { Call } from '../kernel/call.ts';
import type { Delegator } from '../roles/delegator.ts';

export type OrganizationState = 'active' | 'suspended' | 'archived' | 'deleting' | 'deleted';
export const ORGANIZATION_STATES = ['active', 'suspended', 'archived', 'deleting', 'deleted'] as const;

export type MembershipState = 'invited' | 'pending_approval' | 'active' | 'suspended' | 'expired' | 'removed';
export const MEMBERSHIP_STATES = [
  'invited',
  'pending_approval',
  'active',
  'suspended',
  'expired',
  'removed',
] as const;

export type RequestKind = 'invitation' | 'join_request';
export const REQUEST_STATES = [
  'pending',
  'accepted',
  'approved',
  'declined',
  'denied',
  'withdrawn',
  'revoked',
  'reassigned',
  'expired',
] as const;
export type RequestState = (typeof REQUEST_STATES)[number];

export interface OrganizationPolicy {
  mfa_required: boolean;
  require_sso: boolean;
  audit_retention_days: number;
}

export const DEFAULT_ORGANIZATION_POLICY: OrganizationPolicy = {
  mfa_required: false,
  require_sso: false,
  audit_retention_days: 0,
};

export interface Contact {
  email?: string;
  name?: string;
  phone?: string;
}

export interface OrganizationRow {
  realm_id: string;
  id: string;
  slug: string;
  display_name: string;
  state: OrganizationState;
  locale: string | null;
  time_zone: string | null;
  metadata: Record<string, unknown>;
  contact: Contact | null;
  external_id: string | null;
  policy: Partial<OrganizationPolicy>;
  template_name: string | null;
  template_version: string | null;
  version: number;
  deletion_job_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface DomainRow {
  domain: string;
  organization_id: string;
  verified: boolean;
  created_at: Date;
}

export interface MembershipRow {
  realm_id: string;
  id: string;
  organization_id: string;
  user_id: string;
  state: MembershipState;
  source: string;
  external_id: string | null;
  metadata: Record<string, unknown>;
  joined_at: Date | null;
  expires_at: Date | null;
  authorization_revision: number;
  ended_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface MembershipRoleRow {
  membership_id: string;
  assignment_id: string;
  role_id: string;
  name: string;
}

export interface RequestRow {
  realm_id: string;
  id: string;
  kind: RequestKind;
  membership_id: string;
  organization_id: string;
  user_id: string;
  state: RequestState;
  role_ids: string[];
  resend_count: number;
  last_sent_at: Date | null;
  requested_by: string | null;
  decided_by: string | null;
  message: string | null;
  expires_at: Date;
  decided_at: Date | null;
  created_at: Date;
}

/** The kernel Call with what this context's rules read of the caller; every use case takes one. */
export interface OrgCall extends Call {
  /** What the caller may do at realm scope and inside the route's organization. */
  permissions: ReadonlySet<string>;
  /** The authenticated caller, whose live holdings set the delegation ceiling; null for the worker. */
  caller: Delegator | null;
}

export type { Page } from '../platform/http/keyset.ts';
