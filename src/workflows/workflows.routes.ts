// The lifecycle workflow API under /api/v1/realms/{realm} (docs/workflows.md): definitions are
// read with realm.workflows.read and written with realm.workflows.write (plus, for each bulk-action
// step, that action's permission); a workflow's runs are listed under it.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { iso } from '../roles/admin-call.ts';
import { decodePageQuery, pageOf } from '../roles/list-query.ts';
import { idParam } from '../roles/roles.decode.ts';
import { decodeWorkflowDefinition } from './workflows.decode.ts';
import { listRuns, listWorkflows, type RunRow, type WorkflowRow } from './workflows.repo.ts';
import { createWorkflow, deleteWorkflow, readWorkflow, replaceWorkflow } from './workflows.service.ts';

const READER = { audience: 'admin', permissions: ['realm.workflows.read'] } as const;
const WRITER = { audience: 'admin', permissions: ['realm.workflows.write'] } as const;

const presentWorkflow = (w: WorkflowRow) => ({
  id: w.id,
  name: w.name,
  description: w.description,
  enabled: w.enabled,
  triggers: w.triggers,
  steps: w.steps,
  revision: w.revision,
  run_as: { type: w.run_as_type, id: w.run_as_id },
  ...(w.plugin_id ? { plugin_id: w.plugin_id } : {}),
  created_at: iso(w.created_at),
  updated_at: iso(w.updated_at),
});

const presentRun = (r: RunRow) => ({
  id: r.id,
  workflow_id: r.workflow_id,
  revision: r.revision,
  user_id: r.user_id,
  trigger: {
    type: r.trigger_type,
    index: r.trigger_index,
    ...(r.source_event_id ? { event_id: r.source_event_id } : {}),
    ...(r.anchor ? { anchor: iso(r.anchor) } : {}),
  },
  depth: r.depth,
  state: r.state,
  next_step: r.next_step,
  due_at: iso(r.due_at),
  outcomes: r.outcomes,
  error: r.error,
  created_at: iso(r.created_at),
  ended_at: iso(r.ended_at),
});

const workflowParam = (raw: string) => idParam('wfl', raw, 'workflow');

type P = { id: string };

export function registerWorkflowRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  apiRoute(app, ctx, 'POST', '/workflows', WRITER, async ({ req, reply, call, caller }) => {
    const w = await createWorkflow(ctx.db, call, caller, decodeWorkflowDefinition(req.body));
    return reply.code(201).send(presentWorkflow(w));
  });

  apiRoute(app, ctx, 'GET', '/workflows', READER, async ({ req, realm }) => {
    const q = decodePageQuery(req.query, ctx.config.limits, `${realm.id}:GET /workflows`, []);
    return pageOf(await listWorkflows(ctx.db, realm.id, q), q, presentWorkflow);
  });

  apiRoute<P>(app, ctx, 'GET', '/workflows/:id', READER, async ({ req, realm }) =>
    presentWorkflow(await readWorkflow(ctx.db, realm.id, workflowParam(req.params.id))),
  );

  apiRoute<P>(app, ctx, 'PUT', '/workflows/:id', WRITER, async ({ req, call, caller }) => {
    const id = workflowParam(req.params.id);
    return presentWorkflow(
      await replaceWorkflow(ctx.db, call, caller, id, decodeWorkflowDefinition(req.body)),
    );
  });

  apiRoute<P>(app, ctx, 'DELETE', '/workflows/:id', WRITER, async ({ req, reply, call }) => {
    decodeNoBody(req.body);
    await deleteWorkflow(ctx.db, call, workflowParam(req.params.id));
    return reply.code(204).send();
  });

  apiRoute<P>(app, ctx, 'GET', '/workflows/:id/runs', READER, async ({ req, realm }) => {
    const w = await readWorkflow(ctx.db, realm.id, workflowParam(req.params.id));
    const q = decodePageQuery(req.query, ctx.config.limits, `${realm.id}:GET /workflows/${w.id}/runs`, []);
    return pageOf(await listRuns(ctx.db, realm.id, w.id, q), q, presentRun);
  });
}
