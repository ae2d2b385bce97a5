// HTTP edge of projects (docs/api-roles.md, Projects): /projects for the realm and
// /organizations/{org}/projects for the projects an organization owns.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import type { ApiAuthOptions } from '../api/api-auth.ts';
import { apiRoute } from '../api/api-route.ts';
import { liveOrgParam } from '../api/org-call.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { adminChange, iso } from '../roles/admin-call.ts';
import { decodePageQuery, pageOf } from '../roles/list-query.ts';
import { idParam } from '../roles/roles.decode.ts';
import type { ProjectAction } from './project.states.ts';
import { decodeCreateProject, decodeUpdateProject } from './projects.decode.ts';
import { listProjects, type ProjectRow } from './projects.repo.ts';
import {
  changeProject,
  changeProjectState,
  createProject,
  getProject,
  type ProjectRoute,
} from './projects.service.ts';

/** The export record "project" of doc 2, plus updated_at. */
export const presentProject = (p: ProjectRow) => ({
  id: p.id,
  name: p.name,
  description: p.description,
  environment: p.environment,
  state: p.state,
  owner_user_id: p.owner_user_id,
  owner_organization_id: p.owner_organization_id,
  created_at: iso(p.created_at),
  updated_at: iso(p.updated_at),
});

const STATES = ['active', 'suspended', 'archived'];
const ACTIONS: readonly ProjectAction[] = ['suspend', 'reactivate', 'archive'];

export function registerProjectRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const pages = ctx.config.limits;

  const register = (prefix: string, read: ApiAuthOptions, write: ApiAuthOptions) => {
    type P = { org?: string; project: string };
    const routeOf = async (realmId: string, params: { org?: string }): Promise<ProjectRoute> =>
      params.org === undefined
        ? { kind: 'realm' }
        : { kind: 'organization', orgId: await liveOrgParam(ctx.db, realmId, params.org) };
    const projectId = (p: P) => idParam('prj', p.project, 'project');

    apiRoute<P>(app, ctx, 'GET', prefix, read, async ({ req, realm }) => {
      const route = await routeOf(realm.id, req.params);
      const filters =
        route.kind === 'realm' ? (['owner_organization_id', 'state'] as const) : (['state'] as const);
      const q = decodePageQuery(
        req.query,
        pages,
        `${realm.id}:GET ${prefix} ${req.params.org ?? ''}`,
        filters,
      );
      const f = q.filters as { owner_organization_id?: string; state?: string };
      if (f.state !== undefined && !STATES.includes(f.state)) throw problem.invalidRequest('unknown state');
      const orgId = route.kind === 'organization' ? route.orgId : f.owner_organization_id;
      const rows = await listProjects(
        ctx.db,
        realm.id,
        { ...(orgId ? { orgId } : {}), ...(f.state ? { state: f.state } : {}) },
        q,
      );
      return pageOf(rows, q, presentProject);
    });

    apiRoute<P>(app, ctx, 'POST', prefix, write, async ({ req, reply, realm, caller, call }) => {
      const route = await routeOf(realm.id, req.params);
      const input = decodeCreateProject(req.body);
      const p = await createProject(ctx.db, adminChange(call, caller), route, input);
      return reply.code(201).send(presentProject(p));
    });

    apiRoute<P>(app, ctx, 'GET', `${prefix}/:project`, read, async ({ req, realm }) => {
      const route = await routeOf(realm.id, req.params);
      return presentProject(await getProject(ctx.db, realm.id, route, projectId(req.params)));
    });

    apiRoute<P>(app, ctx, 'PATCH', `${prefix}/:project`, write, async ({ req, realm, caller, call }) => {
      const route = await routeOf(realm.id, req.params);
      const id = projectId(req.params);
      const input = decodeUpdateProject(req.body);
      return presentProject(await changeProject(ctx.db, adminChange(call, caller), route, id, input));
    });

    for (const action of ACTIONS) {
      apiRoute<P>(
        app,
        ctx,
        'POST',
        `${prefix}/:project/${action}`,
        write,
        async ({ req, realm, caller, call }) => {
          decodeNoBody(req.body);
          const route = await routeOf(realm.id, req.params);
          const id = projectId(req.params);
          const change = adminChange(call, caller);
          return presentProject(await changeProjectState(ctx.db, change, route, id, action));
        },
      );
    }
  };

  register(
    '/projects',
    { audience: 'admin', permissions: ['realm.projects.read'] },
    { audience: 'admin', permissions: ['realm.projects.write'] },
  );
  register(
    '/organizations/:org/projects',
    { audience: 'admin', permissions: ['org.projects.read'], organizationParam: 'org' },
    { audience: 'admin', permissions: ['org.projects.write'], organizationParam: 'org' },
  );
}
