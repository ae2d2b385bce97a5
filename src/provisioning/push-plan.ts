// What the push sends for one local user or group (RFC 7643 §4.1, §4.2; docs/provisioning.md,
// Push): the resource the target should hold, and the one step that makes it so, judged against
// the digest of what the target last accepted. Pure: the sweep does the I/O.
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

export type Resource = Record<string, unknown>;

export interface LocalUser {
  id: string;
  state: string;
  display_name: string | null;
  email: string | null;
  username: string | null;
  in_scope: boolean;
}

export interface LocalGroup {
  id: string;
  name: string;
  member_remote_ids: readonly string[];
}

export interface Linked {
  remote_id: string | null;
  pushed_digest: string | null;
}

export type PushStep =
  | { kind: 'create'; resource: Resource; digest: string }
  | { kind: 'update'; remoteId: string; resource: Resource; digest: string }
  | { kind: 'delete'; remoteId: string }
  | { kind: 'none' };

/** Accounts that are gone, or on their way out, have no copy at the target. */
const GONE = new Set(['deleted', 'pending_deletion']);

/**
 * The user the target should hold, or null when it should hold none. Our id travels as
 * externalId (RFC 7643 §3.1: the provisioning client's identifier); the userName is the
 * account's username, else its email, else its id. A suspended or locked account stays with
 * `active: false`, as Okta and Entra ID deactivate before they delete.
 */
export function desiredUser(u: LocalUser): Resource | null {
  if (!u.in_scope || GONE.has(u.state)) return null;
  return {
    schemas: [USER_SCHEMA],
    externalId: u.id,
    userName: u.username ?? u.email ?? u.id,
    ...(u.display_name === null ? {} : { displayName: u.display_name }),
    active: u.state === 'active',
    ...(u.email === null ? {} : { emails: [{ value: u.email, type: 'work', primary: true }] }),
  };
}

export function desiredGroup(g: LocalGroup): Resource {
  return {
    schemas: [GROUP_SCHEMA],
    externalId: g.id,
    displayName: g.name,
    members: g.member_remote_ids.map((value) => ({ value })),
  };
}

/** SHA-256 over the resource's canonical JSON (RFC 8785), so equal resources digest equally. */
export const digestOf = (r: Resource): string =>
  createHash('sha256')
    .update(canonicalize(r) ?? '')
    .digest('hex');

/** The one step that brings the target in line with `desired` (null: hold nothing). */
export function stepFor(desired: Resource | null, link: Linked): PushStep {
  if (desired === null)
    return link.remote_id === null ? { kind: 'none' } : { kind: 'delete', remoteId: link.remote_id };
  const digest = digestOf(desired);
  if (link.remote_id === null) return { kind: 'create', resource: desired, digest };
  if (link.pushed_digest === digest) return { kind: 'none' };
  return { kind: 'update', remoteId: link.remote_id, resource: desired, digest };
}

/** RFC 7644 §3.5.2.3: one replace without a path sets every attribute the value names. */
export function replaceAll(r: Resource): Resource {
  const { schemas: _schemas, ...value } = r;
  return { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', value }] };
}
