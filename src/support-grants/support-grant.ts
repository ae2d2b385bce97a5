// A support grant (docs/support-access.md): a support user may act as one customer, through one
// support tool, at one resource, for at most five minutes (spec doc 1, Limits "Support grant").
// Expiry is read from expires_at rather than stored, because doc 2 has it emit no event.

import { digestToken } from '../kernel/digest.ts';
import { randomToken } from '../platform/ids.ts';

/** Doc 1, Limits: a support grant lives at most 5 minutes. */
export const MAX_GRANT_TTL_SECONDS = 300;

/** The subject_token_type a support tool names when it redeems a handoff code (RFC 8693). */
export const SUPPORT_HANDOFF_TOKEN_TYPE = 'urn:proudauth:params:oauth:token-type:support-handoff';

const HANDOFF_PREFIX = 'pa_sh_';
const HANDOFF_SHAPE = /^pa_sh_[A-Za-z0-9_-]{43}$/;

export const isHandoffCodeShape = (code: string): boolean => HANDOFF_SHAPE.test(code);

/** A fresh handoff code (256 random bits) and the digest that is stored in its place. */
export function newHandoffCode(): { code: string; digest: string } {
  const code = `${HANDOFF_PREFIX}${randomToken(32)}`;
  return { code, digest: digestToken(code) };
}

export const handoffDigest = (code: string): string => digestToken(code);

export interface SupportGrantRow {
  id: string;
  state: 'active' | 'revoked';
  actor_user_id: string;
  target_user_id: string;
  client_id: string;
  resource_id: string;
  audience: string;
  organization_id: string | null;
  scopes: string[];
  write: boolean;
  reason: string;
  handoff_expires_at: Date;
  handoff_used_at: Date | null;
  expires_at: Date;
  created_at: Date;
  revoked_at: Date | null;
  revoked_reason: string | null;
}

/** What a reader sees: `expired` once expires_at has passed without a revocation. */
export type PresentedState = 'active' | 'revoked' | 'expired';

export function stateOf(g: SupportGrantRow, now: Date): PresentedState {
  if (g.state === 'revoked') return 'revoked';
  return new Date(g.expires_at).getTime() <= now.getTime() ? 'expired' : 'active';
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

export function presentGrant(g: SupportGrantRow, now: Date) {
  return {
    id: g.id,
    state: stateOf(g, now),
    target_user_id: g.target_user_id,
    actor_user_id: g.actor_user_id,
    client_id: g.client_id,
    resource: g.audience,
    scopes: g.scopes,
    write: g.write,
    organization_id: g.organization_id,
    reason: g.reason,
    created_at: iso(g.created_at),
    expires_at: iso(g.expires_at),
    handoff_used: g.handoff_used_at !== null,
    revoked_at: iso(g.revoked_at),
    revoked_reason: g.revoked_reason,
  };
}

/** Reasons a grant ends early (the `reason` of support.impersonation.ended). */
export type EndReason =
  | 'actor'
  | 'administrator'
  | 'customer'
  | 'customer_opt_out'
  | 'account_revoked'
  | 'actor_revoked'
  | 'handoff_replayed';
