// grant_type=client_credentials (RFC 6749 section 4.4): a service client acts as its service
// principal, whose id is the token's subject; the grant must name subject type
// service_principal (spec doc 1, GrantSpec). The hot path costs one SQL statement: the client
// with its secrets, its principal, the named resource, the grant and the realm's active key are
// read together while the client authenticates (prefetchServiceToken), or, when this process
// holds them from an earlier request, only the realm's clients_revision is read to prove the copy
// current (service-token-cache.ts). The `organization`
// parameter (an organization id or slug) makes the principal act in that organization: the token
// carries its org_id, which a resource with requires_organization needs.
import { type ClientAuthRow, clientAuthJsonOf, clientAuthRowFrom, secretsAsOf } from '../../clients/index.ts';
import { oauthError } from '../../kernel/oauth-error.ts';
import { maybeOne, one } from '../../platform/db/db.ts';
import { builtinResources } from '../../resources/builtin-resources.ts';
import {
  type GrantRow,
  grantFromRow,
  type RealmRef,
  type ResourceRow,
  resourceFromRow,
} from '../../resources/index.ts';
import {
  requireOrganization,
  resolveTarget,
  strictScopes,
  type Target,
  targetOf,
} from '../../resources/resource-target.ts';
import type { OAuthDeps } from '../oauth.deps.ts';
import { serviceOrganization } from '../org-context.ts';
import { issueAccessToken } from '../token-issuer.ts';
import {
  accessTokenResponse,
  dpopConfirmation,
  type GrantContext,
  type KeyRow,
  type PrincipalRow,
  param,
  resourceParam,
  type ServicePrefetch,
  scopeParam,
  type TokenResponse,
} from './grant-context.ts';
import {
  currentClientsRevision,
  keepServiceToken,
  keptServiceToken,
  type ServiceTokenFacts,
} from './service-token-cache.ts';
import { accessTokenHookClaims } from './token-hooks.ts';

interface PrefetchRow {
  revision: string;
  caller: unknown;
  principal: PrincipalRow | null;
  resource: ResourceRow | null;
  grant: GrantRow | null;
  key: KeyRow | null;
}

// Each row is read once by key: the client (and its secrets) through the join, the resource by its
// audience through the join (the grant is looked up by its id), the active key without its sealed
// private key when this process already holds that kid unsealed ($6); and the realm's
// clients_revision, which tags the copy this process keeps.
const PREFETCH_SQL = `
select (select rl.clients_revision::text from realms rl where rl.id = $1) as revision,
  case when c.id is not null then ${clientAuthJsonOf('c', '$3')} end as caller,
  (select json_build_object('id', p.id, 'state', p.state, 'sole_audience', null)
     from service_principals p where p.realm_id = $1 and p.client_row_id = c.id) as principal,
  row_to_json(r) as resource,
  (select row_to_json(x) from client_resource_grants x where x.realm_id = $1 and x.client_row_id = c.id
     and x.resource_id = coalesce($5, r.id)) as grant,
  (select json_build_object('kid', k.kid, 'algorithm', k.algorithm,
       'private_key_sealed', case when k.kid = any ($6::text[]) then null else k.private_key_sealed end)
     from signing_keys k where k.realm_id = $1 and k.state = 'active') as key
from (select 1) one
left join clients c on c.realm_id = $1 and c.client_id = $2
left join resources r on r.realm_id = $1 and r.audience = $4`;

const parsed = <T>(v: unknown): T | null =>
  v === null || v === undefined ? null : ((typeof v === 'string' ? JSON.parse(v) : v) as T);

/**
 * A client loader for client authentication that also reads everything a client_credentials
 * token needs; `take()` hands the rest to the grant once the client has authenticated.
 */
export function prefetchServiceToken(
  app: OAuthDeps,
  realm: RealmRef,
  form: URLSearchParams,
  now: Date,
): { loadClient: (clientId: string) => Promise<ClientAuthRow | null>; take: () => ServicePrefetch | null } {
  let result: ServicePrefetch | null = null;
  const named = form.getAll('resource');
  const audience = named.length === 1 && named[0] !== '' ? (named[0] as string) : null;
  const builtin = audience
    ? builtinResources(app.config.server.publicOrigin, realm.name).find(
        (r) => r.audience === audience || r.id === audience,
      )
    : undefined;
  const current = async (clientId: string): Promise<ServiceTokenFacts> => {
    const copy = keptServiceToken(realm.id, clientId, audience);
    if (copy !== undefined && keyUsable(app, realm.id, copy)) {
      if ((await currentClientsRevision(app.db, realm.id)) === copy.revision) return copy;
    }
    const row = await one<PrefetchRow>(app.db, PREFETCH_SQL, [
      realm.id,
      clientId,
      now,
      audience,
      builtin?.id ?? null,
      app.keyStore.unsealedKids(realm.id),
    ]);
    const resource = parsed<ResourceRow>(row.resource);
    const grant = parsed<GrantRow>(row.grant);
    const facts: ServiceTokenFacts = {
      revision: String(row.revision),
      caller: clientAuthRowFrom(row.caller),
      prefetch: {
        principal: parsed<PrincipalRow>(row.principal),
        resource:
          audience === null
            ? null
            : {
                found: builtin ?? (resource ? resourceFromRow(resource) : null),
                grant: grant ? grantFromRow(grant) : null,
              },
        key: parsed<KeyRow>(row.key),
      },
    };
    // An unknown client is not kept: made-up client ids would push out the copies that serve.
    if (facts.caller !== null) keepServiceToken(realm.id, clientId, audience, facts);
    return facts;
  };
  return {
    loadClient: async (clientId) => {
      const facts = await current(clientId);
      result = facts.prefetch;
      return secretsAsOf(facts.caller, now);
    },
    take: () => result,
  };
}

/** A kept key row without its sealed key signs only while this process holds that kid unsealed. */
const keyUsable = (app: OAuthDeps, realmId: string, facts: ServiceTokenFacts): boolean => {
  const key = facts.prefetch.key;
  return (
    key === null || key.private_key_sealed !== null || app.keyStore.unsealedKids(realmId).includes(key.kid)
  );
};

export async function clientCredentialsGrant(g: GrantContext): Promise<TokenResponse> {
  const client = g.caller.client;
  if (client.type !== 'service')
    throw oauthError.unauthorizedClient('only service clients use client_credentials');
  const requestedScopes = scopeParam(g);
  const requested = resourceParam(g);
  const pre = g.prefetched ?? null;
  const principal = pre ? pre.principal : await findPrincipal(g);
  if (principal?.state !== 'active') throw oauthError.unauthorizedClient('the service principal is disabled');
  let target: Target;
  if (requested !== null && pre?.resource) {
    target = targetOf(client, pre.resource.found, pre.resource.grant, 'service_principal');
  } else {
    // A built-in resource id resolves like its audience URI.
    const audience =
      requested ?? (pre ? (await findPrincipal(g))?.sole_audience : principal.sole_audience) ?? null;
    if (audience === null) throw oauthError.invalidTarget('name the resource');
    target = await resolveTarget(
      g.app.db,
      g.realm,
      g.settings.publicOrigin,
      client,
      audience,
      'service_principal',
    );
  }
  const orgId = await organizationParam(g, principal.id);
  requireOrganization(target, orgId);
  const scopes = strictScopes(target, requestedScopes);
  // JWT bearer ends here too: the hook is told which grant it was.
  const extraClaims = await accessTokenHookClaims(g, param(g, 'grant_type') ?? 'client_credentials', {
    user_id: null,
    service_principal_id: principal.id,
    scopes,
    org_id: orgId,
  });
  const access = await issueAccessToken(
    g.app.db,
    g.settings,
    g.signer,
    {
      realm: g.realm,
      clientId: client.client_id,
      subject: principal.id,
      target,
      scopes,
      authentication: null,
      orgId,
      cnf: dpopConfirmation(g),
      extraClaims,
    },
    g.now,
  );
  return accessTokenResponse(access, scopes);
}

/**
 * The organization the principal acts in, from the `organization` parameter; it must be active
 * and allowed by the principal's allowed_organization_ids (null: any). Refused alike otherwise.
 */
async function organizationParam(g: GrantContext, principalId: string): Promise<string | null> {
  const named = param(g, 'organization');
  if (named === null) return null;
  const orgId = await serviceOrganization(g.app.db, g.realm.id, principalId, named);
  if (orgId === null) throw oauthError.invalidTarget('the client may not act in this organization');
  return orgId;
}

const findPrincipal = (g: GrantContext) =>
  maybeOne<PrincipalRow>(
    g.app.db,
    `select p.id, p.state,
       (select case when count(*) = 1 then min(coalesce(r.audience, x.resource_id)) end
          from client_resource_grants x left join resources r on r.realm_id = x.realm_id and r.id = x.resource_id
         where x.realm_id = p.realm_id and x.client_row_id = p.client_row_id
           and 'service_principal' = any(x.subject_types)) as sole_audience
     from service_principals p where p.realm_id = $1 and p.client_row_id = $2`,
    [g.realm.id, g.caller.client.id],
  );
