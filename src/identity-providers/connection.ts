// What a connection to an upstream identity provider is (doc 2, realm export identity_provider
// lines name its members): its row, its vocabulary, and the configuration it is used with, which
// is the adapter's template (presets.ts) with the stored config over it.

export const KINDS = ['oidc', 'oauth2', 'saml'] as const;
export type Kind = (typeof KINDS)[number];

export const ADAPTERS = ['generic', 'google', 'microsoft', 'github', 'gitlab', 'apple'] as const;
export type Adapter = (typeof ADAPTERS)[number];

/**
 * prove_existing: an upstream identity that is not linked yet is linked to an existing account only
 * after that account proves itself in the same sign-in (link_account); none: never linked that way.
 */
export const LINKING_POLICIES = ['prove_existing', 'none'] as const;
export type LinkingPolicy = (typeof LINKING_POLICIES)[number];

export const CONNECTION_STATES = ['active', 'disabled'] as const;
export type ConnectionState = (typeof CONNECTION_STATES)[number];

export const AUTH_METHODS = [
  'client_secret_basic',
  'client_secret_post',
  'none',
  'apple_client_secret',
] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

export const RESPONSE_MODES = ['query', 'form_post'] as const;
export type ResponseMode = (typeof RESPONSE_MODES)[number];

/** The claims a connection reads from the upstream, each named by the upstream's claim. */
export const MAPPED_CLAIMS = [
  'subject',
  'email',
  'email_verified',
  'name',
  'given_name',
  'family_name',
  'preferred_username',
] as const;
export type MappedClaim = (typeof MAPPED_CLAIMS)[number];
export type ClaimMapping = Partial<Record<MappedClaim, string>>;

/** The stored `config` object; every member optional where the adapter's template supplies it. */
export interface ConnectionConfig {
  client_id?: string;
  scopes?: string[];
  discovery_url?: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  userinfo_endpoint?: string;
  emails_endpoint?: string;
  token_endpoint_auth_method?: AuthMethod;
  response_mode?: ResponseMode;
  /** Tenants a `{tenant}` issuer accepts; empty: any. */
  allowed_tenants?: string[];
  /** Clients whose sign-ins may use the connection; empty: every client. */
  client_ids?: string[];
  /** Treat the upstream's email address as verified even when no claim says so. */
  trust_email?: boolean;
  /** Keep the upstream's access and refresh tokens (sealed). */
  store_tokens?: boolean;
  /** amr values and acr values that mean the upstream did multi-factor authentication. */
  mfa_amr_values?: string[];
  mfa_acr_values?: string[];
  /** Apple: the team and key ids of the private key that signs the client secret. */
  team_id?: string;
  key_id?: string;
  /** SAML: where the IdP's metadata was read (again on every change that names it). */
  metadata_url?: string;
  /** SAML: the IdP's single sign-on service (HTTP-Redirect binding). */
  sso_url?: string;
  /** SAML: the IdP's signing certificates (PEM); a signature by any of them is accepted. */
  idp_certificates?: string[];
  /** SAML: the NameID format the AuthnRequest asks for; absent: the IdP's choice. */
  name_id_format?: string;
  /** SAML: the assertion itself must be signed (true by default); false: a signed response will do. */
  want_assertions_signed?: boolean;
}

export interface ConnectionRow {
  realm_id: string;
  id: string;
  organization_id: string | null;
  alias: string;
  display_name: string;
  kind: Kind;
  adapter: Adapter;
  state: ConnectionState;
  issuer: string;
  config: ConnectionConfig;
  linking_policy: LinkingPolicy;
  jit_provisioning: boolean;
  jit_default_role_id: string | null;
  trust_upstream_mfa: boolean;
  claim_mapping: ClaimMapping;
  client_secret_sealed: string | null;
  client_secret_ref: string | null;
  /** SAML: the service-provider certificate (PEM); its private key is client_secret_sealed. */
  sp_certificate: string | null;
  owner_user_id: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** The `{tenant}` placeholder of a multi-tenant issuer (doc 1, Federation transfers). */
export const TENANT_PLACEHOLDER = '{tenant}';

export const isMultiTenant = (issuer: string): boolean => issuer.includes(TENANT_PLACEHOLDER);

/** A multi-tenant issuer with one tenant filled in. */
export const issuerForTenant = (issuer: string, tenant: string): string =>
  issuer.split(TENANT_PLACEHOLDER).join(tenant);

/** The row binding of a sealed client secret: moved to another row, it does not open. */
export const providerSecretAad = (realmId: string, id: string): string => `${realmId}/${id}`;
