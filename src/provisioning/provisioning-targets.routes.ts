// The administration API of outbound provisioning (docs/provisioning.md, API): targets of the realm
// under /provisioning-targets (realm.users.*), of an organization under
// /organizations/{org}/provisioning-targets (org.members.* inside it), each with
// POST .../{id}/sync queuing a directory.sync job. The bearer credential is write-only: no answer
// carries it, the creation's included.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { idempotencyKeyOf } from '../jobs/index.ts';
import { decodeBody, decodeNoBody } from '../platform/http/decode.ts';
import { iso } from '../roles/admin-call.ts';
import { decodePageQuery, pageOf } from '../roles/list-query.ts';
import { idParam } from '../roles/roles.decode.ts';
import { createTargetBody, patchTargetBody } from './provisioning-targets.decode.ts';
import { listTargets, type TargetRow } from './provisioning-targets.repo.ts';
import {
  changeTarget,
  createTarget,
  queueDirectorySync,
  removeTarget,
  type TargetPatch,
  targetOf,
} from './provisioning-targets.service.ts';

export const presentTarget = (t: TargetRow) => ({
  id: t.id,
  name: t.name,
  organization_id: t.organization_id,
  base_url: t.base_url,
  allow_private_network: t.allow_private_network,
  push: t.push_enabled,
  state: t.state,
  push_status: {
    last_pushed_at: iso(t.last_pushed_at),
    consecutive_failures: t.push_failures,
    last_error: t.last_push_error,
  },
  created_at: iso(t.created_at),
  updated_at: iso(t.updated_at),
});

type Params = { org?: string };
type IdParams = Params & { id: string };

export function registerProvisioningTargetRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const realmScope = {
    path: '/provisioning-targets',
    read: { audience: 'admin', permissions: ['realm.users.read'] },
    write: { audience: 'admin', permissions: ['realm.users.write'] },
    orgOf: (_params: Params) => null,
  } as const;
  const orgScope = {
    path: '/organizations/:org/provisioning-targets',
    read: { audience: 'admin', permissions: ['org.members.read'], organizationParam: 'org' },
    write: { audience: 'admin', permissions: ['org.members.write'], organizationParam: 'org' },
    orgOf: (params: Params) => idParam('org', params.org ?? '', 'organization'),
  } as const;
  const deps = ctx.webhooks;
  const targetId = (p: IdParams) => idParam('prt', p.id, 'provisioning target');
  for (const scope of [realmScope, orgScope]) {
    const one = `${scope.path}/:id`;
    apiRoute<Params>(app, ctx, 'GET', scope.path, scope.read, async ({ req, realm }) => {
      const orgId = scope.orgOf(req.params);
      const q = decodePageQuery(
        req.query,
        ctx.config.limits,
        `${realm.id}:${orgId}:GET /provisioning-targets`,
        [],
      );
      return pageOf(await listTargets(ctx.db, realm.id, orgId, q), q, presentTarget);
    });

    apiRoute<Params>(app, ctx, 'POST', scope.path, scope.write, async ({ req, reply, call }) => {
      const b = decodeBody(createTargetBody, req.body);
      const input = {
        name: b.name,
        baseUrl: b.baseUrl,
        bearerToken: b.bearerToken,
        allowPrivateNetwork: b.allowPrivateNetwork,
        push: b.push,
      };
      const row = await createTarget(deps, call, input, scope.orgOf(req.params));
      return reply.code(201).header('cache-control', 'no-store').send(presentTarget(row));
    });

    apiRoute<IdParams>(app, ctx, 'GET', one, scope.read, async ({ req, call }) =>
      presentTarget(await targetOf(ctx.db, call.realmId, targetId(req.params), scope.orgOf(req.params))),
    );

    apiRoute<IdParams>(app, ctx, 'PATCH', one, scope.write, async ({ req, call }) => {
      const b = decodeBody(patchTargetBody, req.body);
      const patch: TargetPatch = {};
      if (b.name !== undefined) patch.name = b.name;
      if (b.baseUrl !== undefined) patch.baseUrl = b.baseUrl;
      if (b.bearerToken !== undefined) patch.bearerToken = b.bearerToken;
      if (b.allowPrivateNetwork !== undefined) patch.allowPrivateNetwork = b.allowPrivateNetwork;
      if (b.push !== undefined) patch.push = b.push;
      if (b.state !== undefined) patch.state = b.state;
      return presentTarget(
        await changeTarget(deps, call, targetId(req.params), scope.orgOf(req.params), patch),
      );
    });

    apiRoute<IdParams>(app, ctx, 'DELETE', one, scope.write, async ({ req, reply, call }) => {
      await removeTarget(deps, call, targetId(req.params), scope.orgOf(req.params));
      return reply.code(204).send();
    });

    apiRoute<IdParams>(app, ctx, 'POST', `${one}/sync`, scope.write, async ({ req, reply, call }) => {
      decodeNoBody(req.body);
      const key = idempotencyKeyOf(req.headers);
      const job = await queueDirectorySync(deps, call, targetId(req.params), scope.orgOf(req.params), key);
      return reply.code(202).send({ job_id: job.id });
    });
  }
}
