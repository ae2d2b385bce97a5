// A SCIM Group (RFC 7643 §4.2) from a realm-wide group: displayName is its name, externalId its
// external id, members its user members. The ETag is a digest of the representation, so any
// change, members included, moves it.
import { createHash } from 'node:crypto';
import type { GroupRow } from '../groups/index.ts';
import { ScimError } from './scim-error.ts';
import { GROUP_SCHEMA } from './scim-schemas.ts';
import { type JsonObject, memberOf } from './scim-user-resource.ts';

export interface ScimGroupInput {
  displayName: string;
  externalId: string | null;
  /** User ids; null when the request does not name members (they stay as they are). */
  members: string[] | null;
}

const bad = (detail: string) => new ScimError(400, 'invalidValue', detail);

export function decodeGroupResource(body: unknown): ScimGroupInput {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new ScimError(400, 'invalidSyntax', 'the body must be a JSON object');
  const obj = body as JsonObject;
  const schemas = memberOf(obj, 'schemas');
  if (!Array.isArray(schemas) || !schemas.includes(GROUP_SCHEMA))
    throw new ScimError(400, 'invalidSyntax', `schemas must name ${GROUP_SCHEMA}`);
  const displayName = memberOf(obj, 'displayName');
  if (typeof displayName !== 'string' || displayName.trim() === '' || displayName.length > 100)
    throw bad('displayName must be 1 to 100 characters');
  const externalId = memberOf(obj, 'externalId');
  if (
    externalId !== undefined &&
    externalId !== null &&
    (typeof externalId !== 'string' || externalId.length > 255)
  )
    throw bad('externalId must be a string of at most 255 characters');
  const members = memberOf(obj, 'members');
  if (members !== undefined && members !== null && !Array.isArray(members))
    throw bad('members must be a list');
  return {
    displayName: displayName.trim(),
    externalId: typeof externalId === 'string' ? externalId : null,
    members:
      members === undefined || members === null
        ? null
        : members.map((m) => {
            const v = m !== null && typeof m === 'object' ? memberOf(m as JsonObject, 'value') : undefined;
            if (typeof v !== 'string') throw bad('each member needs a value naming a user');
            return v;
          }),
  };
}

export const groupVersion = (g: GroupRow, members: readonly string[]) =>
  `W/"${createHash('sha256')
    .update(
      JSON.stringify([g.name, g.external_id, new Date(g.updated_at).toISOString(), [...members].sort()]),
    )
    .digest('base64url')
    .slice(0, 22)}"`;

export function groupResource(g: GroupRow, members: readonly string[], base: string): JsonObject {
  const body: JsonObject = {
    schemas: [GROUP_SCHEMA],
    id: g.id,
    ...(g.external_id === null ? {} : { externalId: g.external_id }),
    displayName: g.name,
    members: members.map((id) => ({ value: id, type: 'User', $ref: `${base}/Users/${id}` })),
  };
  const version = groupVersion(g, members);
  return {
    ...body,
    meta: {
      resourceType: 'Group',
      created: new Date(g.created_at).toISOString(),
      lastModified: new Date(g.updated_at).toISOString(),
      version,
      location: `${base}/Groups/${g.id}`,
    },
  };
}
