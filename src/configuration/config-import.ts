// Validating and importing a configuration document (spec doc 1, Endpoints: Configuration; Import
// semantics 1-8). The plan is made first; applying it is one transaction in which every change
// goes through the use case the administration API uses (its checks, audit records and events),
// so every change commits or none does.
import { recorder } from '../audit/index.ts';
import {
  type ClientsDeps,
  type CreateClientInput,
  createClient,
  type UpdateClientInput,
  updateClient,
} from '../clients/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Config } from '../platform/config/settings.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db } from '../platform/db/db.ts';
import { joinedDb } from '../platform/db/joined-tx.ts';
import { Problem, type ProblemExtra, problem } from '../platform/http/problem.ts';
import { changePolicyInTx, currentPolicy, policyRulesOf, type RealmRow } from '../realms/index.ts';
import {
  createResourceInTx,
  type ResourceCall,
  replaceResourceInTx,
  setGrantInTx,
} from '../resources/index.ts';
import {
  type AdminChange,
  createPermission,
  createRole,
  type Delegator,
  lockAuthorization,
  replaceRoleDefinition,
} from '../roles/index.ts';
import { readConfigDocument } from './config-document.ts';
import { type ImportMode, type Plan, type PlanBody, planImport } from './config-plan.ts';

export interface ConfigurationDeps {
  db: Db;
  keyring: RootKeyring | null;
  config: Pick<Config, 'environment' | 'webauthn'> & { server: Pick<Config['server'], 'publicOrigin'> };
}

export interface ImportRequest {
  realm: Pick<RealmRow, 'id' | 'name'>;
  call: Call & { correlationId: string };
  caller: Delegator;
  body: unknown;
  mode: ImportMode;
}

/** Test seams: run between planning and applying, and before each change is applied. */
export interface ImportHooks {
  afterPlan?: () => Promise<void>;
  beforeChange?: (kind: string, key: string) => Promise<void>;
}

export async function planConfiguration(deps: ConfigurationDeps, r: ImportRequest): Promise<Plan> {
  const read = readConfigDocument(r.body, deps.config.environment);
  if (!read) throw problem.invalidRequest('the configuration document must be a JSON object');
  return planImport(
    {
      q: deps.db,
      realm: r.realm,
      publicOrigin: deps.config.server.publicOrigin,
      mode: r.mode,
      rules: policyRulesOf(deps.config),
      permissions: r.caller.permissions,
    },
    read.doc,
    read.errors,
  );
}

/** The problem a plan with errors answers a real import or a dry run with. */
export const planProblem = (body: PlanBody) =>
  // The plan's errors carry JSON pointers (`path`) rather than the dotted `field` of other bodies.
  new Problem(422, 'validation_failed', 'the configuration document has errors', {
    ...body,
  } as unknown as ProblemExtra);

export interface ImportResult {
  plan: PlanBody;
  applied: boolean;
}

/**
 * Plans, then (unless `dryRun`) applies. A plan with errors is 422; changes the caller lacks the
 * permission for are 403; a policy revision that moved since planning is 412.
 */
export async function importConfiguration(
  deps: ConfigurationDeps,
  r: ImportRequest,
  opts: { dryRun: boolean },
  hooks: ImportHooks = {},
): Promise<ImportResult> {
  const plan = await planConfiguration(deps, r);
  if (plan.body.errors.length > 0) throw planProblem(plan.body);
  if (opts.dryRun) return { plan: plan.body, applied: false };
  if (plan.body.missing_permissions.length > 0)
    throw new Problem(403, 'forbidden', `the import needs ${plan.body.missing_permissions.join(', ')}`, {
      missing_permissions: plan.body.missing_permissions,
    });
  await hooks.afterPlan?.();
  await apply(deps, r, plan, hooks);
  return { plan: plan.body, applied: true };
}

/** The given tls_client_auth members; a subject member replaces the stored subject (updateClient). */
const tlsPatch = (v: CreateClientInput, g: (wire: string) => boolean): Partial<UpdateClientInput> => ({
  ...(g('tls_client_auth_subject_dn') ? { tlsClientAuthSubjectDn: v.tlsClientAuthSubjectDn } : {}),
  ...(g('tls_client_auth_san_dns') ? { tlsClientAuthSanDns: v.tlsClientAuthSanDns } : {}),
  ...(g('tls_client_auth_san_uri') ? { tlsClientAuthSanUri: v.tlsClientAuthSanUri } : {}),
  ...(g('tls_client_auth_san_ip') ? { tlsClientAuthSanIp: v.tlsClientAuthSanIp } : {}),
  ...(g('tls_client_auth_san_email') ? { tlsClientAuthSanEmail: v.tlsClientAuthSanEmail } : {}),
  ...(g('tls_client_auth_trust_anchors') ? { tlsClientAuthTrustAnchors: v.tlsClientAuthTrustAnchors } : {}),
});

const clientPatch = (
  c: Plan['clientUpdates'] extends Map<string, infer D> ? D : never,
): UpdateClientInput => {
  const v = c.input;
  const g = (wire: string) => c.given.has(wire);
  return {
    ...(g('name') ? { name: v.name } : {}),
    ...(g('description') ? { description: v.description ?? null } : {}),
    ...(g('redirect_uris') && v.redirectUris ? { redirectUris: v.redirectUris } : {}),
    ...(g('post_logout_redirect_uris') && v.postLogoutRedirectUris
      ? { postLogoutRedirectUris: v.postLogoutRedirectUris }
      : {}),
    ...(g('allowed_origins') && v.allowedOrigins ? { allowedOrigins: v.allowedOrigins } : {}),
    ...(g('grant_types') && v.grantTypes ? { grantTypes: v.grantTypes } : {}),
    ...(g('consent_mode') && v.consentMode ? { consentMode: v.consentMode } : {}),
    ...(g('token_policy') && v.tokenPolicy ? { tokenPolicy: v.tokenPolicy } : {}),
    ...(g('allow_remember_me') && v.allowRememberMe !== undefined
      ? { allowRememberMe: v.allowRememberMe }
      : {}),
    ...(g('id_token_claims') && v.idTokenClaims ? { idTokenClaims: v.idTokenClaims } : {}),
    ...(g('require_pushed_authorization_requests') && v.requirePushedAuthorizationRequests !== undefined
      ? { requirePushedAuthorizationRequests: v.requirePushedAuthorizationRequests }
      : {}),
    ...(g('jwks') && v.jwks ? { jwks: v.jwks } : {}),
    ...tlsPatch(v, g),
    ...(g('backchannel_logout_uri') ? { backchannelLogoutUri: v.backchannelLogoutUri ?? null } : {}),
    ...(g('backchannel_logout_session_required') && v.backchannelLogoutSessionRequired !== undefined
      ? { backchannelLogoutSessionRequired: v.backchannelLogoutSessionRequired }
      : {}),
  };
};

async function apply(
  deps: ConfigurationDeps,
  r: ImportRequest,
  plan: Plan,
  hooks: ImportHooks,
): Promise<void> {
  const { call } = r;
  const step = async (kind: string, key: string) => hooks.beforeChange?.(kind, key);
  await deps.db.tx(async (tx) => {
    const db = joinedDb(tx, deps.db.kind);
    // Taken first: policy changes and role changes of this realm wait for this import.
    await lockAuthorization(tx, r.realm.id);
    const doc = plan.doc;
    if (doc.policy.given) {
      if ((await currentPolicy(tx, r.realm.id)).revision !== plan.policyRevision)
        throw problem.preconditionFailed('the realm policy changed since the import was planned');
      if (plan.policyChanges) {
        await step('policy', 'policy');
        await changePolicyInTx(
          tx,
          recorder(tx, call),
          call,
          { patch: doc.policy.patch, expectedRevision: plan.policyRevision, reason: 'configuration import' },
          policyRulesOf(deps.config),
        );
      }
    }
    const admin: AdminChange = { ...call, caller: r.caller };
    for (const p of doc.permissions) {
      if (!plan.body.permissions.create.includes(p.input.name)) continue;
      await step('permission', p.input.name);
      await createPermission(db, admin, p.input);
    }
    const rc: ResourceCall = {
      realm: r.realm,
      publicOrigin: deps.config.server.publicOrigin,
      actor: call.actor,
      now: call.now,
    };
    for (const res of doc.resources) {
      const aud = res.input.audience;
      if (plan.body.resources.create.includes(aud)) {
        await step('resource', aud);
        await createResourceInTx(tx, rc, res.input);
      }
      const update = plan.resourceUpdates.get(aud);
      if (update) {
        await step('resource', aud);
        await replaceResourceInTx(tx, rc, update.id, update.input, undefined);
      }
    }
    const clientsDeps: ClientsDeps = { db, keyring: deps.keyring, config: deps.config };
    for (const c of doc.clients) {
      const id = c.input.clientId;
      if (plan.body.clients.create.includes(id)) {
        await step('client', id);
        await createClient(clientsDeps, c.input, call, { issueSecret: false });
      }
      const update = plan.clientUpdates.get(id);
      if (update) {
        await step('client', id);
        await updateClient(clientsDeps, id, clientPatch(update), undefined, call);
      }
    }
    for (const role of doc.roles) {
      const name = role.input.name;
      if (plan.body.roles.create.includes(name)) {
        await step('role', name);
        await createRole(db, admin, { kind: 'realm' }, role.input);
      }
      const update = plan.roleUpdates.get(name);
      if (update) {
        await step('role', name);
        const row = update.row;
        await replaceRoleDefinition(
          db,
          admin,
          { kind: 'realm' },
          row.id,
          {
            ...role.input,
            description: role.input.description ?? row.description,
            compositeRoleIds: row.composite_role_ids,
            incompatibleRoleIds: row.incompatible_role_ids,
          },
          undefined,
        );
      }
    }
    for (const { grant: g, stored } of plan.grantChanges) {
      await step('grant', `${g.clientId} ${g.resource}`);
      await setGrantInTx(tx, rc, g.clientId, g.resource, {
        allowedScopes: g.spec.scopes,
        // Import semantics 5: omitted members keep the stored values; a new grant is for users.
        subjectTypes: g.spec.subjectTypes ?? stored?.subjectTypes ?? ['user'],
        ...(g.spec.exchangePolicy
          ? { exchangePolicy: g.spec.exchangePolicy }
          : stored?.exchangePolicy
            ? { exchangePolicy: stored.exchangePolicy }
            : {}),
      });
    }
  });
}
