// Request bodies of the identity-provider administration API (docs/federation.md, Connections).
// The members are those doc 2's realm export names for an identity_provider line, plus the
// write-only client secret; an unknown member is 400, a value that breaks a rule 422.
import { array, boolean, enumOf, nullable, object, optional, string } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import {
  ADAPTERS,
  type Adapter,
  AUTH_METHODS,
  type ClaimMapping,
  CONNECTION_STATES,
  type ConnectionConfig,
  type ConnectionState,
  KINDS,
  type Kind,
  LINKING_POLICIES,
  type LinkingPolicy,
  RESPONSE_MODES,
} from './connection.ts';

const MAX_URL_BYTES = 2048;
const url = () => optional(string({ minLength: 1, maxBytes: MAX_URL_BYTES }));
const names = (max: number) =>
  optional(
    array(string({ minLength: 1, maxLength: 128, printableAscii: true }), { maxItems: max, unique: true }),
  );
const claim = () => optional(string({ minLength: 1, maxLength: 128, printableAscii: true }));

export const ALIAS_PATTERN = /[a-z0-9][a-z0-9_-]{0,63}/;

const configShape = object({
  // Required for OpenID Connect and OAuth 2.0 (connection-rules.ts); SAML has no client id.
  client_id: optional(string({ minLength: 1, maxLength: 255, printableAscii: true })),
  scopes: optional(
    array(string({ minLength: 1, maxLength: 128, pattern: /[\x21\x23-\x5b\x5d-\x7e]+/ }), {
      maxItems: 50,
      unique: true,
    }),
  ),
  discovery_url: url(),
  authorization_endpoint: url(),
  token_endpoint: url(),
  userinfo_endpoint: url(),
  emails_endpoint: url(),
  token_endpoint_auth_method: optional(enumOf(AUTH_METHODS)),
  response_mode: optional(enumOf(RESPONSE_MODES)),
  allowed_tenants: names(100),
  client_ids: names(100),
  trust_email: optional(boolean()),
  store_tokens: optional(boolean()),
  mfa_amr_values: names(20),
  mfa_acr_values: optional(
    array(string({ minLength: 1, maxLength: 256, printableAscii: true }), { maxItems: 20, unique: true }),
  ),
  team_id: optional(string({ minLength: 1, maxLength: 64, printableAscii: true })),
  key_id: optional(string({ minLength: 1, maxLength: 64, printableAscii: true })),
  metadata_url: url(),
  sso_url: url(),
  idp_certificates: optional(
    array(string({ minLength: 1, maxBytes: 16384 }), { maxItems: 10, unique: true }),
  ),
  name_id_format: optional(string({ minLength: 1, maxLength: 256, printableAscii: true })),
  want_assertions_signed: optional(boolean()),
});

const claimMappingShape = object({
  subject: claim(),
  email: claim(),
  email_verified: claim(),
  name: claim(),
  given_name: claim(),
  family_name: claim(),
  preferred_username: claim(),
});

const displayName = () => string({ minLength: 1, maxLength: 100, pattern: /[^\p{Cc}]+/u });
const issuer = () => string({ minLength: 1, maxBytes: 512 });
// A PEM private key (Apple) is the longest secret a provider hands out.
const clientSecret = () => optional(string({ minLength: 1, maxBytes: 8192 }));
// SAML IdP metadata uploaded as XML (write only: what it says lands in issuer and config).
const metadataXml = () => optional(string({ minLength: 1, maxBytes: 512 * 1024 }));
const secretRef = () =>
  optional(string({ minLength: 5, maxBytes: 512, pattern: /(file|env|cred|kms|vault):[\x21-\x7e]+/ }));

const createShape = object({
  alias: string({ pattern: ALIAS_PATTERN }),
  display_name: displayName(),
  kind: optional(enumOf(KINDS)),
  adapter: optional(enumOf(ADAPTERS)),
  state: optional(enumOf(CONNECTION_STATES)),
  issuer: optional(issuer()),
  organization_id: optional(string({ minLength: 1, maxLength: 64, printableAscii: true })),
  config: configShape,
  linking_policy: optional(enumOf(LINKING_POLICIES)),
  jit_provisioning: optional(boolean()),
  jit_default_role_id: optional(string({ minLength: 1, maxLength: 64, printableAscii: true })),
  trust_upstream_mfa: optional(boolean()),
  claim_mapping: optional(claimMappingShape),
  client_secret: clientSecret(),
  client_secret_ref: secretRef(),
  idp_metadata_xml: metadataXml(),
});

const patchShape = object({
  display_name: optional(displayName()),
  state: optional(enumOf(CONNECTION_STATES)),
  issuer: optional(issuer()),
  config: optional(configShape),
  linking_policy: optional(enumOf(LINKING_POLICIES)),
  jit_provisioning: optional(boolean()),
  jit_default_role_id: optional(nullable(string({ minLength: 1, maxLength: 64, printableAscii: true }))),
  trust_upstream_mfa: optional(boolean()),
  claim_mapping: optional(claimMappingShape),
  client_secret: clientSecret(),
  client_secret_ref: secretRef(),
  idp_metadata_xml: metadataXml(),
});

/** The secret as given: sealed under the root key, or a key reference resolved when used. */
export type SecretInput = { kind: 'sealed'; value: string } | { kind: 'reference'; ref: string };

export interface ConnectionInput {
  alias: string;
  displayName: string;
  kind: Kind | null;
  adapter: Adapter;
  state: ConnectionState;
  issuer: string | null;
  organizationId: string | null;
  config: ConnectionConfig;
  linkingPolicy: LinkingPolicy;
  jitProvisioning: boolean;
  jitDefaultRoleId: string | null;
  trustUpstreamMfa: boolean;
  claimMapping: ClaimMapping;
  secret: SecretInput | null;
  /** SAML: uploaded IdP metadata. */
  metadataXml: string | null;
}

export interface ConnectionPatch {
  displayName?: string;
  state?: ConnectionState;
  issuer?: string;
  config?: ConnectionConfig;
  linkingPolicy?: LinkingPolicy;
  jitProvisioning?: boolean;
  jitDefaultRoleId?: string | null;
  trustUpstreamMfa?: boolean;
  claimMapping?: ClaimMapping;
  secret?: SecretInput;
  metadataXml?: string;
}

type DecodedConfig = ReturnType<typeof configShape>;
type DecodedClaims = ReturnType<typeof claimMappingShape>;

/** Back to the wire names the row stores and the API and export show. */
function configOf(c: DecodedConfig): ConnectionConfig {
  const out: ConnectionConfig = {
    client_id: c.clientId,
    scopes: c.scopes,
    discovery_url: c.discoveryUrl,
    authorization_endpoint: c.authorizationEndpoint,
    token_endpoint: c.tokenEndpoint,
    userinfo_endpoint: c.userinfoEndpoint,
    emails_endpoint: c.emailsEndpoint,
    token_endpoint_auth_method: c.tokenEndpointAuthMethod,
    response_mode: c.responseMode,
    allowed_tenants: c.allowedTenants,
    client_ids: c.clientIds,
    trust_email: c.trustEmail,
    store_tokens: c.storeTokens,
    mfa_amr_values: c.mfaAmrValues,
    mfa_acr_values: c.mfaAcrValues,
    team_id: c.teamId,
    key_id: c.keyId,
    metadata_url: c.metadataUrl,
    sso_url: c.ssoUrl,
    idp_certificates: c.idpCertificates,
    name_id_format: c.nameIdFormat,
    want_assertions_signed: c.wantAssertionsSigned,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as ConnectionConfig;
}

function claimsOf(c: DecodedClaims | undefined): ClaimMapping {
  if (!c) return {};
  const out: ClaimMapping = {
    subject: c.subject,
    email: c.email,
    email_verified: c.emailVerified,
    name: c.name,
    given_name: c.givenName,
    family_name: c.familyName,
    preferred_username: c.preferredUsername,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as ClaimMapping;
}

function secretOf(b: { clientSecret?: string; clientSecretRef?: string }): SecretInput | null {
  if (b.clientSecret !== undefined && b.clientSecretRef !== undefined)
    throw problem.validation([
      {
        field: 'client_secret_ref',
        code: 'conflicts',
        detail: 'give client_secret or client_secret_ref, not both',
      },
    ]);
  if (b.clientSecret !== undefined) return { kind: 'sealed', value: b.clientSecret };
  if (b.clientSecretRef !== undefined) return { kind: 'reference', ref: b.clientSecretRef };
  return null;
}

export function decodeCreateConnection(raw: unknown): ConnectionInput {
  const b = createShape(raw);
  return {
    alias: b.alias,
    displayName: b.displayName,
    kind: b.kind ?? null,
    adapter: b.adapter ?? 'generic',
    state: b.state ?? 'active',
    issuer: b.issuer ?? null,
    organizationId: b.organizationId ?? null,
    config: configOf(b.config),
    linkingPolicy: b.linkingPolicy ?? 'prove_existing',
    jitProvisioning: b.jitProvisioning ?? true,
    jitDefaultRoleId: b.jitDefaultRoleId ?? null,
    trustUpstreamMfa: b.trustUpstreamMfa ?? false,
    claimMapping: claimsOf(b.claimMapping),
    secret: secretOf(b),
    metadataXml: b.idpMetadataXml ?? null,
  };
}

export function decodePatchConnection(raw: unknown): ConnectionPatch {
  const b = patchShape(raw);
  const secret = secretOf(b);
  const patch: ConnectionPatch = {};
  if (b.displayName !== undefined) patch.displayName = b.displayName;
  if (b.state !== undefined) patch.state = b.state;
  if (b.issuer !== undefined) patch.issuer = b.issuer;
  if (b.config !== undefined) patch.config = configOf(b.config);
  if (b.linkingPolicy !== undefined) patch.linkingPolicy = b.linkingPolicy;
  if (b.jitProvisioning !== undefined) patch.jitProvisioning = b.jitProvisioning;
  if (b.jitDefaultRoleId !== undefined) patch.jitDefaultRoleId = b.jitDefaultRoleId;
  if (b.trustUpstreamMfa !== undefined) patch.trustUpstreamMfa = b.trustUpstreamMfa;
  if (b.claimMapping !== undefined) patch.claimMapping = claimsOf(b.claimMapping);
  if (secret) patch.secret = secret;
  if (b.idpMetadataXml !== undefined) patch.metadataXml = b.idpMetadataXml;
  return patch;
}
