// HTTP edge of the realm settings (docs/policy.md, "The settings API"): GET /settings shows the
// current policy and its revision; PUT /settings merges a policy patch over it (spec doc 1,
// Endpoints: Configuration, PUT /settings; Policy).
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeBody, integer, object, optional, unknownJson } from '../platform/http/decode.ts';
import { currentPolicy } from './policy.repo.ts';
import { changePolicy } from './policy.service.ts';
import { policyRulesOf } from './policy-check.ts';
import type { RealmRow } from './realm.repo.ts';

const READ = { audience: 'admin', permissions: ['realm.settings.read'] } as const;
const WRITE = { audience: 'admin', permissions: ['realm.settings.write'] } as const;

const settingsBody = object({
  policy: unknownJson(),
  expected_policy_revision: optional(integer({ min: 0, max: 2_147_483_647 })),
});

function present(reply: FastifyReply, realm: RealmRow, revision: number, policy: unknown, extra = {}) {
  return reply
    .header('etag', `"${revision}"`)
    .header('cache-control', 'no-store')
    .send({ realm: realm.name, policy_revision: revision, policy, ...extra });
}

export function registerSettingsRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  apiRoute(app, ctx, 'GET', '/settings', READ, async ({ reply, realm }) => {
    const p = await currentPolicy(ctx.db, realm.id);
    return present(reply, realm, p.revision, p.document);
  });

  apiRoute(app, ctx, 'PUT', '/settings', WRITE, async ({ req, reply, realm, call }) => {
    const body = decodeBody(settingsBody, req.body);
    const r = await changePolicy(
      ctx.db,
      call,
      { patch: body.policy, expectedRevision: body.expectedPolicyRevision, reason: 'settings API' },
      policyRulesOf(ctx.config),
    );
    return present(reply, realm, r.revision, r.policy, { changed: r.changed });
  });
}
