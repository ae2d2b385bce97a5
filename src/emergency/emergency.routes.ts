// HTTP edge of emergency controls (spec doc 2, "Keys and emergency controls"; docs/emergency.md):
// POST /emergency/controls with realm.emergency.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeEmergencyControl } from './emergency.decode.ts';
import { applyEmergencyControl } from './emergency-controls.service.ts';

const EMERGENCY = { audience: 'admin', permissions: ['realm.emergency'] } as const;

export function registerEmergencyRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  apiRoute(app, ctx, 'POST', '/emergency/controls', EMERGENCY, async ({ req, reply, call }) => {
    const control = decodeEmergencyControl(req.body);
    const outcome = await applyEmergencyControl(ctx, call, control);
    return reply.header('cache-control', 'no-store').send({
      target_type: control.targetType,
      target_id: control.targetId,
      action: control.action,
      state: outcome.state,
      changed: outcome.changed,
    });
  });
}
