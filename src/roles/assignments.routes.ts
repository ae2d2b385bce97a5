// HTTP edge of role assignments (docs/api-roles.md): /role-assignments for the realm, and
// /organizations/{org}/role-assignments for organization administrators.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { liveOrgParam } from '../api/org-call.ts';
import { problem } from '../platform/http/problem.ts';
import { adminChange } from './admin-call.ts';
import { listAssignments } from './assignments.repo.ts';
import { assignRole, getAssignment, unassignRole } from './assignments.service.ts';
import { decodePageQuery, pageOf } from './list-query.ts';
import {
  decodeAssignment,
  decodeOrgAssignment,
  idParam,
  ROLE_SCOPES,
  SUBJECT_TYPES,
} from './roles.decode.ts';
import { presentAssignment } from './roles.present.ts';

const FILTERS = ['subject_type', 'subject_id', 'role_id', 'scope_type', 'scope_id'] as const;
const ORG_FILTERS = ['subject_type', 'subject_id', 'role_id'] as const;

function checkEnum(name: string, value: string | undefined, allowed: readonly string[]): void {
  if (value !== undefined && !allowed.includes(value))
    throw problem.invalidRequest(`${name} must be one of ${allowed.join(', ')}`);
}

/** One page of assignments; an organization's routes list only its organization's scope. */
async function assignmentPage(ctx: ApiDeps, realmId: string, rawQuery: unknown, orgId: string | null) {
  const route = orgId === null ? '/role-assignments' : `/organizations/${orgId}/role-assignments`;
  const q = decodePageQuery(
    rawQuery,
    ctx.config.limits,
    `${realmId}:GET ${route}`,
    orgId === null ? FILTERS : ORG_FILTERS,
  );
  const f: Partial<Record<(typeof FILTERS)[number], string>> = q.filters;
  checkEnum('subject_type', f.subject_type, SUBJECT_TYPES);
  checkEnum('scope_type', f.scope_type, ROLE_SCOPES);
  const rows = await listAssignments(
    ctx.db,
    realmId,
    {
      ...(f.subject_type ? { subjectType: f.subject_type } : {}),
      ...(f.subject_id ? { subjectId: f.subject_id } : {}),
      ...(f.role_id ? { roleId: f.role_id } : {}),
      ...(orgId === null
        ? {
            ...(f.scope_type ? { scopeType: f.scope_type } : {}),
            ...(f.scope_id ? { scopeId: f.scope_id } : {}),
          }
        : { scopeType: 'organization', scopeId: orgId }),
    },
    q,
  );
  return pageOf(rows, q, presentAssignment);
}

export function registerAssignmentRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const read = { audience: 'admin', permissions: ['realm.roles.read'] } as const;
  // realm.roles.write, or org.roles.assign inside the assignment's organization: checked by the service.
  const assign = { audience: 'admin', permissions: [] } as const;
  const orgRead = { audience: 'admin', permissions: ['org.roles.read'], organizationParam: 'org' } as const;
  const orgAssign = {
    audience: 'admin',
    permissions: ['org.roles.assign'],
    organizationParam: 'org',
  } as const;

  apiRoute(app, ctx, 'GET', '/role-assignments', read, async ({ req, realm }) =>
    assignmentPage(ctx, realm.id, req.query, null),
  );

  apiRoute(app, ctx, 'POST', '/role-assignments', assign, async ({ req, reply, caller, call }) => {
    const change = adminChange(call, caller);
    const input = decodeAssignment(req.body, change.now);
    const row = await assignRole(ctx.db, change, { kind: 'realm' }, input);
    return reply.code(201).send(presentAssignment(row));
  });

  apiRoute<{ id: string }>(app, ctx, 'GET', '/role-assignments/:id', read, async ({ req, realm }) => {
    const id = idParam('ras', req.params.id, 'role assignment');
    return presentAssignment(await getAssignment(ctx.db, realm.id, { kind: 'realm' }, id));
  });

  apiRoute<{ id: string }>(
    app,
    ctx,
    'DELETE',
    '/role-assignments/:id',
    assign,
    async ({ req, reply, caller, call }) => {
      const id = idParam('ras', req.params.id, 'role assignment');
      await unassignRole(ctx.db, adminChange(call, caller), { kind: 'realm' }, id);
      return reply.code(204).send();
    },
  );

  type OrgP = { org: string };
  apiRoute<OrgP>(app, ctx, 'GET', '/organizations/:org/role-assignments', orgRead, async ({ req, realm }) => {
    const orgId = await liveOrgParam(ctx.db, realm.id, req.params.org);
    return assignmentPage(ctx, realm.id, req.query, orgId);
  });

  apiRoute<OrgP>(
    app,
    ctx,
    'POST',
    '/organizations/:org/role-assignments',
    orgAssign,
    async ({ req, reply, realm, caller, call }) => {
      const orgId = await liveOrgParam(ctx.db, realm.id, req.params.org);
      const change = adminChange(call, caller);
      const input = decodeOrgAssignment(req.body, orgId, change.now);
      const row = await assignRole(ctx.db, change, { kind: 'organization', orgId }, input);
      return reply.code(201).send(presentAssignment(row));
    },
  );

  type OrgItem = { org: string; id: string };
  apiRoute<OrgItem>(
    app,
    ctx,
    'GET',
    '/organizations/:org/role-assignments/:id',
    orgRead,
    async ({ req, realm }) => {
      const orgId = await liveOrgParam(ctx.db, realm.id, req.params.org);
      const id = idParam('ras', req.params.id, 'role assignment');
      return presentAssignment(await getAssignment(ctx.db, realm.id, { kind: 'organization', orgId }, id));
    },
  );

  apiRoute<OrgItem>(
    app,
    ctx,
    'DELETE',
    '/organizations/:org/role-assignments/:id',
    orgAssign,
    async ({ req, reply, realm, caller, call }) => {
      const orgId = await liveOrgParam(ctx.db, realm.id, req.params.org);
      const id = idParam('ras', req.params.id, 'role assignment');
      await unassignRole(ctx.db, adminChange(call, caller), { kind: 'organization', orgId }, id);
      return reply.code(204).send();
    },
  );
}
