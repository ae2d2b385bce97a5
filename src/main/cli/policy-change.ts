// How identity-cli changes a realm's policy (docs/cli.md, "Realm policy"): through the settings
// API when a server is running, so nothing needs the server stopped; straight in the database only
// when no server answers.
//
// A stored sign-in for the realm (identity-cli login) means: use the API of that server. Without
// one, the command looks for a server at --server or server.public_origin; if one answers, it
// refuses and says to log in (writing the database under a running server would bypass it, and
// the embedded database cannot be opened twice); if none answers, it writes the database.
import { OPERATOR_ACTOR } from '../../audit/audit.types.ts';
import { systemCall } from '../../kernel/call.ts';
import { Problem } from '../../platform/http/problem.ts';
import { changePolicy, findRealmByName, policyRulesOf } from '../../realms/index.ts';
import { loadRuntimeConfig } from '../runtime-config.ts';
import { adminRequest, findSignIn, problemSummary, responseBody } from './admin-api.ts';
import { realmUrl } from './api-client.ts';
import { withCliContext } from './cli-context.ts';
import { CliError } from './cli-error.ts';
import { cliIo, configFlag } from './cli-io.ts';

export interface PolicyCommandFlags {
  config?: string | undefined;
  server?: string | undefined;
  credentials?: string | undefined;
}

export interface PolicyChangeOutcome {
  realm: string;
  policy_revision: number;
  changed: boolean;
  via: 'api' | 'database';
}

const PROBE_MS = 2_000;

/** Whether anything answers HTTP at the realm's metadata URL. */
async function serverAnswers(server: string, realm: string): Promise<boolean> {
  try {
    const res = await fetch(`${realmUrl(server, realm)}/.well-known/openid-configuration`, {
      signal: AbortSignal.timeout(PROBE_MS),
    });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

function describeErrors(p: unknown): string {
  const errors =
    (p as { errors?: { field?: string; code?: string; detail?: string }[] } | null)?.errors ?? [];
  return errors
    .map((e) => `\n  ${e.field ?? ''}: ${e.code ?? ''}${e.detail ? ` (${e.detail})` : ''}`)
    .join('');
}

export async function changeRealmPolicy(
  realmName: string,
  patch: Record<string, unknown>,
  reason: string,
  flags: PolicyCommandFlags,
  expectedRevision?: number,
): Promise<PolicyChangeOutcome> {
  const signIn = findSignIn({ realm: realmName, server: flags.server, credentials: flags.credentials });
  if (signIn) {
    const body = JSON.stringify({
      policy: patch,
      ...(expectedRevision !== undefined ? { expected_policy_revision: expectedRevision } : {}),
    });
    const r = await adminRequest(signIn, { method: 'PUT', path: '/settings', body });
    const out = await responseBody(r.response);
    if (!r.ok) throw new CliError(`PUT /settings: ${problemSummary(r.status, out)}${describeErrors(out)}`);
    const o = out as { policy_revision: number; changed: boolean };
    cliIo().stderr.write(`changed through the settings API of ${signIn.credential.server}\n`);
    return { realm: realmName, policy_revision: o.policy_revision, changed: o.changed, via: 'api' };
  }
  const server = flags.server ?? loadRuntimeConfig(configFlag(flags), cliIo().env).server.publicOrigin;
  if (await serverAnswers(server, realmName))
    throw new CliError(
      `a server answers at ${server}: sign in first (identity-cli login --realm ${realmName} --server ${server}) and the change goes through its API`,
    );
  return withCliContext(flags as Record<string, unknown>, async (ctx) => {
    const realm = await findRealmByName(ctx.db, realmName);
    if (!realm) throw new CliError(`no realm named ${realmName}`);
    try {
      const r = await changePolicy(
        ctx.db,
        systemCall(realm.id, ctx.clock.now(), OPERATOR_ACTOR),
        { patch, reason, expectedRevision },
        policyRulesOf(ctx.config),
      );
      return { realm: realm.name, policy_revision: r.revision, changed: r.changed, via: 'database' as const };
    } catch (e) {
      if (e instanceof Problem) throw new CliError(`${e.code}: ${e.detail ?? ''}${describeErrors(e.extra)}`);
      throw e;
    }
  });
}
