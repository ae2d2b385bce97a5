// Schemas of the clients administration API (docs/api-clients.md, docs/openapi.md). A body of the
// wrong shape (unknown member, wrong JSON type) is 400 invalid_request as for every strict JSON
// body; a body of the right shape with values the rules refuse is 422 validation_failed. Rules
// about URIs, origins, grants, methods and keys stay in client-rules.ts.
import Type, { type Static } from 'typebox';
import {
  type CamelKeys,
  idParam,
  NoContent,
  problems,
  type RouteSchema,
  schemaDecoder,
  withMaxJsonBytes,
  withRule,
} from '../platform/http/route-schema.ts';
import { SamlSettingsBody, SamlSettingsPatchBody, SamlSettingsView } from './saml-clients.ts';

export const CLIENT_TYPES = ['web', 'spa', 'native', 'device', 'service', 'saml'] as const;
export const CONSENT_MODES = ['implicit', 'required'] as const;
export const CLIENT_STATES = ['active', 'disabled'] as const;
export const ID_TOKEN_CLAIMS = ['standard', 'minimal'] as const;

const closed = { additionalProperties: false } as const;
const withoutControls = (v: string) => (/[\p{Cc}\p{Cf}]/u.test(v) ? 'no control characters' : null);

/** RFC 6749 client ids are visible ASCII; space is left out so ids survive Basic and paths. */
const CLIENT_ID = '^[\\x21-\\x7e]+$';
const clientId = () => Type.String({ minLength: 1, maxLength: 128, pattern: CLIENT_ID });
const name = () =>
  withRule(Type.String({ minLength: 1, maxLength: 200 }), withoutControls, 'control_character');
const description = () => withRule(Type.String({ maxLength: 1000 }), withoutControls, 'control_character');
// Item rules (URI shapes, counts) are value rules checked in client-rules.ts.
const uriList = () => Type.Array(Type.String());
const grantTypes = () => Type.Array(Type.String({ maxLength: 256 }));
const jwk = () =>
  withMaxJsonBytes(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 32 }), 16 * 1024);
const jwks = () => Type.Object({ keys: Type.Array(jwk()) }, closed);
const tokenPolicy = () => Type.Object({ require_mfa: Type.Optional(Type.Boolean()) }, closed);
const opt = Type.Optional;
const orNull = <S extends ReturnType<typeof Type.String>>(s: S) => Type.Union([s, Type.Null()]);
// tls_client_auth (RFC 8705 section 2.1.2); values and counts are judged in tls-client-auth-rules.ts.
const tlsSubject = () => opt(Type.String({ maxLength: 2048 }));
const tlsMembers = () => ({
  tls_client_auth_subject_dn: tlsSubject(),
  tls_client_auth_san_dns: tlsSubject(),
  tls_client_auth_san_uri: tlsSubject(),
  tls_client_auth_san_ip: tlsSubject(),
  tls_client_auth_san_email: tlsSubject(),
  tls_client_auth_trust_anchors: opt(Type.Array(Type.String({ maxLength: 16 * 1024 }))),
});

export const CreateClientBody = Type.Object(
  {
    client_id: clientId(),
    name: name(),
    description: opt(description()),
    type: Type.Enum([...CLIENT_TYPES]),
    redirect_uris: opt(uriList()),
    post_logout_redirect_uris: opt(uriList()),
    allowed_origins: opt(uriList()),
    grant_types: opt(grantTypes()),
    token_endpoint_auth_method: opt(Type.String({ maxLength: 64 })),
    consent_mode: opt(Type.Enum([...CONSENT_MODES])),
    token_policy: opt(tokenPolicy()),
    allow_remember_me: opt(Type.Boolean()),
    id_token_claims: opt(Type.Enum([...ID_TOKEN_CLAIMS])),
    require_pushed_authorization_requests: opt(Type.Boolean()),
    backchannel_logout_uri: opt(Type.String()),
    backchannel_logout_session_required: opt(Type.Boolean()),
    jwks: opt(jwks()),
    ...tlsMembers(),
    /** Only for type saml, and required there (saml-clients.ts). */
    saml: opt(SamlSettingsBody),
  },
  closed,
);
/** Also what configuration import reads a client with (config-document.ts). */
export const decodeCreateClient = schemaDecoder(CreateClientBody);
export type CreateClientInput = CamelKeys<Static<typeof CreateClientBody>>;

/**
 * Members replace the stored ones; absent members keep theirs. client_id, type and
 * token_endpoint_auth_method are accepted only with their current value (422 immutable otherwise),
 * so a client read with GET can be sent back after editing.
 */
export const UpdateClientBody = Type.Object(
  {
    client_id: opt(Type.String()),
    type: opt(Type.String()),
    token_endpoint_auth_method: opt(Type.String()),
    name: opt(name()),
    description: opt(orNull(description())),
    redirect_uris: opt(uriList()),
    post_logout_redirect_uris: opt(uriList()),
    allowed_origins: opt(uriList()),
    grant_types: opt(grantTypes()),
    consent_mode: opt(Type.Enum([...CONSENT_MODES])),
    token_policy: opt(tokenPolicy()),
    allow_remember_me: opt(Type.Boolean()),
    id_token_claims: opt(Type.Enum([...ID_TOKEN_CLAIMS])),
    require_pushed_authorization_requests: opt(Type.Boolean()),
    backchannel_logout_uri: opt(orNull(Type.String())),
    backchannel_logout_session_required: opt(Type.Boolean()),
    jwks: opt(jwks()),
    ...tlsMembers(),
    /** Only for type saml: the SAML members to change (saml-clients.ts). */
    saml: opt(SamlSettingsPatchBody),
  },
  closed,
);
export type UpdateClientInput = CamelKeys<Static<typeof UpdateClientBody>>;

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;
const rfc3339 = (v: string) =>
  RFC3339.test(v) && !Number.isNaN(Date.parse(v)) ? null : 'an RFC 3339 date-time';

/** Optional body of a secret rotation. */
export const IssueSecretBody = Type.Object(
  { expires_at: opt(withRule(Type.String({ maxLength: 64 }), rfc3339, 'pattern')) },
  closed,
);

// ---- answers ------------------------------------------------------------------------------------

const instant = () => Type.String({ format: 'date-time' });

export const SecretView = Type.Object(
  {
    id: Type.String(),
    created_at: instant(),
    expires_at: Type.Union([instant(), Type.Null()]),
    last_used_at: Type.Union([instant(), Type.Null()]),
  },
  closed,
);

const clientMembers = {
  id: Type.String(),
  client_id: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  type: Type.Enum([...CLIENT_TYPES]),
  state: Type.Enum([...CLIENT_STATES]),
  builtin: Type.Boolean(),
  redirect_uris: Type.Array(Type.String()),
  post_logout_redirect_uris: Type.Array(Type.String()),
  allowed_origins: Type.Array(Type.String()),
  grant_types: Type.Array(Type.String()),
  token_endpoint_auth_method: Type.String(),
  consent_mode: Type.Enum([...CONSENT_MODES]),
  token_policy: Type.Object({ require_mfa: Type.Boolean() }, closed),
  allow_remember_me: Type.Boolean(),
  id_token_claims: Type.Enum([...ID_TOKEN_CLAIMS]),
  require_pushed_authorization_requests: Type.Boolean(),
  backchannel_logout_uri: Type.Union([Type.String(), Type.Null()]),
  backchannel_logout_session_required: Type.Boolean(),
  jwks: Type.Union([
    Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.Unknown())) }),
    Type.Null(),
  ]),
  // Only a tls_client_auth client has them: its one subject member and its trust anchors.
  tls_client_auth_subject_dn: opt(Type.String()),
  tls_client_auth_san_dns: opt(Type.String()),
  tls_client_auth_san_uri: opt(Type.String()),
  tls_client_auth_san_ip: opt(Type.String()),
  tls_client_auth_san_email: opt(Type.String()),
  tls_client_auth_trust_anchors: opt(Type.Array(Type.String())),
  service_principal_id: Type.Union([Type.String(), Type.Null()]),
  secrets: Type.Array(SecretView),
  saml: opt(SamlSettingsView),
  created_at: instant(),
  updated_at: instant(),
};

export const ClientView = Type.Object(clientMembers, { ...closed, title: 'Client' });
/** The answer to a creation: the secret, when one is issued, is shown this once. */
export const CreatedClient = Type.Object(
  { ...clientMembers, client_secret: opt(Type.String()), client_secret_id: opt(Type.String()) },
  closed,
);

export const ClientListQuery = Type.Object(
  {
    limit: opt(Type.Integer({ minimum: 1 })),
    cursor: opt(Type.String()),
    type: opt(Type.Enum([...CLIENT_TYPES])),
    state: opt(Type.Enum([...CLIENT_STATES])),
  },
  closed,
);

// ---- the routes' schemas -------------------------------------------------------------------------

export const ClientParams = Type.Object({ client: idParam(/^[\x21-\x7e]{1,128}$/, 'no such client') });
const SecretParams = Type.Object({
  client: idParam(/^[\x21-\x7e]{1,128}$/, 'no such client'),
  secret: idParam(/^csk_[0-9a-z]{26}$/, 'no such client secret'),
});
const tags = ['clients'];
const NoBody = Type.Object({}, closed);

export const CLIENT_ROUTES = {
  create: {
    summary: 'Register a client',
    tags,
    body: CreateClientBody,
    bodyOptional: true,
    response: { 201: CreatedClient, ...problems(409) },
  },
  list: {
    summary: 'List clients',
    tags,
    querystring: ClientListQuery,
    response: {
      200: Type.Object(
        { items: Type.Array(ClientView), next_cursor: Type.Union([Type.String(), Type.Null()]) },
        closed,
      ),
    },
  },
  read: { summary: 'Read a client', tags, params: ClientParams, response: { 200: ClientView } },
  update: {
    summary: 'Change a client',
    tags,
    params: ClientParams,
    headers: Type.Object({ 'if-match': opt(Type.String()) }),
    body: UpdateClientBody,
    bodyOptional: true,
    response: { 200: ClientView, ...problems(409, 412) },
  },
  setState: {
    summary: 'Disable or enable a client',
    tags,
    params: ClientParams,
    body: NoBody,
    bodyOptional: true,
    response: { 200: ClientView, ...problems(409) },
  },
  issueSecret: {
    summary: 'Issue a new client secret (rotation)',
    tags,
    params: ClientParams,
    body: IssueSecretBody,
    bodyOptional: true,
    response: {
      201: Type.Object({ ...SecretView.properties, client_secret: Type.String() }, closed),
      ...problems(409),
    },
  },
  listSecrets: {
    summary: "List a client's secrets",
    tags,
    params: ClientParams,
    response: { 200: Type.Object({ items: Type.Array(SecretView) }, closed), ...problems(409) },
  },
  revokeSecret: {
    summary: 'Revoke a client secret',
    tags,
    params: SecretParams,
    response: { 204: NoContent, ...problems(409) },
  },
} satisfies Record<string, RouteSchema>;
