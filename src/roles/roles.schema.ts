// Schemas of the permissions and roles routes (docs/api-roles.md, docs/openapi.md): the bodies, the
// path parameters and the wire forms of roles.present.ts. Reserved permission names and the role
// name's spacing rule stay in roles.decode.ts, which reads bodies through these schemas.
import Type from 'typebox';
import { NoContent, problems, type RouteSchema, withRule } from '../platform/http/route-schema.ts';
import { MAX_ROLE_EXPANSION } from './effective-roles.ts';

export const ROLE_SCOPES = ['realm', 'organization', 'project'] as const;
export const SENSITIVITIES = ['low', 'normal', 'high', 'privileged'] as const;

const closed = { additionalProperties: false } as const;
const CONTROL = /\p{Cc}/u;

/** Free text of min..max characters without control characters. */
const plainText = (max: number, min = 0) =>
  withRule(
    Type.String({ minLength: min, maxLength: max }),
    (v) => (CONTROL.test(v) ? 'no control characters' : null),
    'pattern',
  );
/** An identifier: 1..128 printable ASCII characters without spaces (as scope names are). */
const idText = () => Type.String({ minLength: 1, maxLength: 128, pattern: '^[!-~]+$' });
const idList = () => Type.Array(idText(), { maxItems: MAX_ROLE_EXPANSION, uniqueItems: true, default: [] });

export const PermissionBody = Type.Object(
  {
    name: idText(),
    description: Type.Optional(plainText(500)),
    // An empty string means the default, as in the configuration document.
    sensitivity: Type.Optional(Type.Enum(['', ...SENSITIVITIES])),
  },
  closed,
);

export const RoleBody = Type.Object(
  {
    name: plainText(100, 1),
    description: Type.Optional(plainText(500)),
    scope: Type.Optional(Type.Enum([...ROLE_SCOPES])),
    project_id: Type.Optional(idText()),
    permissions: Type.Optional(Type.Array(idText(), { maxItems: 500, default: [] })),
    composite_role_ids: Type.Optional(idList()),
    incompatible_role_ids: Type.Optional(idList()),
  },
  closed,
);

// ---- answers ------------------------------------------------------------------------------------

const instant = () => Type.String({ format: 'date-time' });
const nullable = <S extends ReturnType<typeof Type.String>>(s: S) => Type.Union([s, Type.Null()]);

export const PermissionView = Type.Object(
  {
    name: Type.String(),
    description: nullable(Type.String()),
    sensitivity: Type.Enum([...SENSITIVITIES]),
    builtin: Type.Boolean(),
    created_at: nullable(instant()),
  },
  closed,
);

export const RoleView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    builtin: Type.Boolean(),
    scope: Type.Enum([...ROLE_SCOPES]),
    organization_id: nullable(Type.String()),
    project_id: nullable(Type.String()),
    permissions: Type.Array(Type.String()),
    composite_role_ids: Type.Array(Type.String()),
    incompatible_role_ids: Type.Array(Type.String()),
    version: Type.Integer(),
    created_at: instant(),
    updated_at: instant(),
  },
  { ...closed, title: 'Role' },
);

const pageOf = <S extends typeof RoleView | typeof PermissionView>(item: S) =>
  Type.Object({ items: Type.Array(item), next_cursor: nullable(Type.String()) }, closed);

const pageQuery = <F extends Record<string, ReturnType<typeof Type.String>>>(filters: F) =>
  Type.Object(
    { limit: Type.Optional(Type.Integer({ minimum: 1 })), cursor: Type.Optional(Type.String()), ...filters },
    closed,
  );

// ---- the routes' schemas -------------------------------------------------------------------------

// Role ids are checked in the handler after the organization (a dead organization is 404 first).
const ROLE_ID = Type.String({ pattern: '^rol_[0-9A-Za-z_-]{1,64}$' });
const ORG = Type.String({ minLength: 1 });
const tags = ['roles'];
const orgTags = ['roles', 'organizations'];

const roleItem = (t: string[], org: boolean) => {
  const params = Type.Object(org ? { org: ORG, role: ROLE_ID } : { role: ROLE_ID });
  return {
    read: { summary: 'Read a role', tags: t, params, response: { 200: RoleView } },
    replace: {
      summary: "Replace a role's definition",
      tags: t,
      params,
      headers: Type.Object({ 'if-match': Type.Optional(Type.String()) }),
      body: RoleBody,
      response: { 200: RoleView, ...problems(409, 412) },
    },
    delete: { summary: 'Delete a role', tags: t, params, response: { 204: NoContent, ...problems(409) } },
  } satisfies Record<string, RouteSchema>;
};

const OrgParams = Type.Object({ org: ORG });

export const ROLE_ROUTES = {
  listPermissions: {
    summary: 'List permissions (the built-in ones with builtin=true)',
    tags,
    querystring: pageQuery({ builtin: Type.String({ enum: ['true', 'false'] }) }),
    response: { 200: pageOf(PermissionView) },
  },
  createPermission: {
    summary: 'Define an application permission',
    tags,
    body: PermissionBody,
    response: { 201: PermissionView, ...problems(409) },
  },
  deletePermission: {
    summary: 'Remove an application permission',
    tags,
    params: Type.Object({ name: Type.String() }),
    response: { 204: NoContent, ...problems(409) },
  },
  listRoles: {
    summary: 'List realm and project roles',
    tags,
    querystring: pageQuery({ project_id: Type.String() }),
    response: { 200: pageOf(RoleView) },
  },
  createRole: {
    summary: 'Create a role',
    tags,
    body: RoleBody,
    response: { 201: RoleView, ...problems(409) },
  },
  listOrgRoles: {
    summary: "List an organization's roles",
    tags: orgTags,
    params: OrgParams,
    querystring: pageQuery({}),
    response: { 200: pageOf(RoleView) },
  },
  createOrgRole: {
    summary: 'Create an organization role',
    tags: orgTags,
    params: OrgParams,
    body: RoleBody,
    response: { 201: RoleView, ...problems(409) },
  },
  realmItem: roleItem(tags, false),
  orgItem: roleItem(orgTags, true),
};
