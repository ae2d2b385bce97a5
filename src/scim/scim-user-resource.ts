// A SCIM User (RFC 7643 §4.1, with the enterprise extension of §4.3) to and from what ProudAuth
// stores: userName, externalId and the attributes in the SCIM record; displayName and active
// (the account's state) on the account itself. Unknown attributes are dropped (RFC 7644 §3.3).
import { ScimError } from './scim-error.ts';
import {
  ENTERPRISE_ATTRIBUTES,
  ENTERPRISE_SCHEMA,
  KEPT_USER_ATTRIBUTES,
  USER_SCHEMA,
} from './scim-schemas.ts';
import type { ScimUserRow } from './scim-users.repo.ts';

export type JsonObject = Record<string, unknown>;

export interface ScimUserInput {
  userName: string;
  externalId: string | null;
  displayName: string | null;
  active: boolean;
  password: string | null;
  attributes: JsonObject;
}

const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A member of an object, its name matched without regard to case (RFC 7643 §2.1). */
export function memberOf(obj: JsonObject, name: string): unknown {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(obj)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

const bad = (detail: string) => new ScimError(400, 'invalidValue', detail);

function optionalText(obj: JsonObject, name: string, max: number): string | null {
  const v = memberOf(obj, name);
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length > max)
    throw bad(`${name} must be a string of at most ${max} characters`);
  return v;
}

/** Okta and Entra ID send booleans, some clients the strings "True"/"False". */
function activeOf(obj: JsonObject): boolean {
  const v = memberOf(obj, 'active');
  if (v === undefined || v === null) return true;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  throw bad('active must be a boolean');
}

export function decodeUserResource(body: unknown): ScimUserInput {
  if (!isObject(body)) throw new ScimError(400, 'invalidSyntax', 'the body must be a JSON object');
  const schemas = memberOf(body, 'schemas');
  if (
    !Array.isArray(schemas) ||
    !schemas.some((s) => typeof s === 'string' && s.toLowerCase() === USER_SCHEMA.toLowerCase())
  )
    throw new ScimError(400, 'invalidSyntax', `schemas must name ${USER_SCHEMA}`);
  const userName = optionalText(body, 'userName', 256);
  if (userName === null || userName.trim() === '') throw bad('userName is required');
  const attributes: JsonObject = {};
  for (const name of KEPT_USER_ATTRIBUTES) {
    const v = memberOf(body, name);
    if (v !== undefined && v !== null) attributes[name] = v;
  }
  const ext = memberOf(body, ENTERPRISE_SCHEMA);
  if (ext !== undefined && ext !== null) {
    if (!isObject(ext)) throw bad('the enterprise extension must be an object');
    const kept: JsonObject = {};
    for (const name of ENTERPRISE_ATTRIBUTES) {
      const v = memberOf(ext, name);
      if (v !== undefined && v !== null) kept[name] = v;
    }
    // Entra ID sends manager as a plain id in PATCH, as an object in POST.
    if (typeof kept.manager === 'string') kept.manager = { value: kept.manager };
    if (Object.keys(kept).length > 0) attributes[ENTERPRISE_SCHEMA] = kept;
  }
  return {
    userName,
    externalId: optionalText(body, 'externalId', 256),
    displayName: optionalText(body, 'displayName', 200),
    active: activeOf(body),
    password: optionalText(body, 'password', 1024),
    attributes,
  };
}

/** The primary email, else the first one: the one that becomes the account's email identifier. */
export function primaryEmailOf(attributes: JsonObject): string | null {
  const emails = attributes.emails;
  if (!Array.isArray(emails)) return null;
  const objects = emails.filter(isObject);
  const chosen = objects.find((e) => e.primary === true) ?? objects[0];
  return typeof chosen?.value === 'string' ? chosen.value : null;
}

export const etagOf = (version: number) => `W/"${version}"`;

export function userResource(row: ScimUserRow, base: string): JsonObject {
  const { [ENTERPRISE_SCHEMA]: ext, ...core } = row.attributes;
  return {
    schemas: ext ? [USER_SCHEMA, ENTERPRISE_SCHEMA] : [USER_SCHEMA],
    id: row.user_id,
    ...(row.external_id === null ? {} : { externalId: row.external_id }),
    userName: row.user_name,
    ...(row.display_name === null ? {} : { displayName: row.display_name }),
    active: row.state === 'active',
    ...core,
    ...(ext ? { [ENTERPRISE_SCHEMA]: ext } : {}),
    meta: {
      resourceType: 'User',
      created: new Date(row.created_at).toISOString(),
      lastModified: new Date(row.updated_at).toISOString(),
      version: etagOf(row.version),
      location: `${base}/Users/${row.user_id}`,
    },
  };
}
