// grant_type=client_credentials (RFC 6749 section 4.4): a service client acts as its service
// principal, whose id is the token's subject; the grant must name subject type
// service_principal (spec doc 1, GrantSpec).
import { maybeOne } from '../../platform/db/db.ts';
import { oauthError } from '../oauth-error.ts';
import { resolveTarget, strictScopes } from '../resource-target.ts';
import { issueAccessToken } from '../token-issuer.ts';
import {
  type GrantContext,
  resourceParam,
  scopeParam,
  scopeString,
  type TokenResponse,
} from './grant-context.ts';

interface PrincipalRow {
  id: string;
  state: string;
  /** The audience of the client's only service-principal grant, when it has exactly one. */
  sole_audience: string | null;
}

export async function clientCredentialsGrant(g: GrantContext): Promise<TokenResponse> {
  const client = g.caller.client;
  if (client.type !== 'service')
    throw oauthError.unauthorizedClient('only service clients use client_credentials');
  const requestedScopes = scopeParam(g);
  const requested = resourceParam(g);
  const principal = await maybeOne<PrincipalRow>(
    g.app.db,
    `select p.id, p.state,
       (select case when count(*) = 1 then min(coalesce(r.audience, x.resource_id)) end
          from client_resource_grants x left join resources r on r.realm_id = x.realm_id and r.id = x.resource_id
         where x.realm_id = p.realm_id and x.client_row_id = p.client_row_id
           and 'service_principal' = any(x.subject_types)) as sole_audience
     from service_principals p where p.realm_id = $1 and p.client_row_id = $2`,
    [g.realm.id, client.id],
  );
  if (principal?.state !== 'active') throw oauthError.unauthorizedClient('the service principal is disabled');
  // A built-in resource id resolves like its audience URI.
  const audience = requested ?? principal.sole_audience;
  if (audience === null) throw oauthError.invalidTarget('name the resource');
  const target = await resolveTarget(
    g.app.db,
    g.realm,
    g.settings.publicOrigin,
    client,
    audience,
    'service_principal',
  );
  const scopes = strictScopes(target, requestedScopes);
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
    },
    g.now,
  );
  const response: TokenResponse = {
    access_token: access.token,
    token_type: 'Bearer',
    expires_in: access.expiresIn,
  };
  const scope = scopeString(scopes);
  if (scope) response.scope = scope;
  return response;
}
