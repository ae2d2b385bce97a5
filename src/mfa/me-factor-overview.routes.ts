// GET /me/factors (docs/security.md, "Self-service factors"): which sign-in methods the
// account holds, and its remembered devices, so the account page can offer to remove what exists
// and set up what does not. Metadata only: never a secret, seed or device token. The spec names no
// such path (docs/decisions.md); Keycloak's account console and Logto's account centre show the same.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { problem } from '../platform/http/problem.ts';
import { factorOverview } from './factors.repo.ts';
import { listRememberedDevices } from './remembered-devices.repo.ts';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export function registerMeFactorOverviewRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  // A read, so recovery-restricted sessions may use it too (document 1, case rule 1).
  const account = { audience: 'account' } as const;
  apiRoute(app, ctx, 'GET', '/me/factors', account, async ({ realm, caller, call }) => {
    if (caller.kind !== 'user') throw problem.forbidden('only a user has factors');
    const held = await factorOverview(ctx.db, realm.id, caller.id);
    const devices = await listRememberedDevices(ctx.db, realm.id, caller.id, call.now);
    return {
      password: held.password,
      totp: held.totp,
      hotp: held.hotp,
      passkeys: held.passkeys,
      recovery_codes_remaining: held.codes,
      remembered_devices: devices.map((d) => ({
        id: d.id,
        user_agent: d.user_agent,
        created_at: iso(d.created_at),
        expires_at: iso(d.expires_at),
        last_used_at: iso(d.last_used_at),
      })),
    };
  });
}
