// Configuration templates of the adapters (docs/federation.md, Presets): what Google, Microsoft
// Entra ID, GitHub, GitLab and Apple need beyond a client id and secret. A connection's effective
// configuration is its adapter's template with the stored config over it, member by member, so an
// administrator (or a test's local stand-in) may replace any endpoint.
import type { Adapter, ClaimMapping, ConnectionConfig, ConnectionRow, Kind } from './connection.ts';

export interface Preset {
  kind: Kind;
  /** The issuer a connection of this adapter gets when it names none. */
  issuer?: string;
  config: ConnectionConfig;
  claims: ClaimMapping;
}

const OIDC_CLAIMS: Required<ClaimMapping> = {
  subject: 'sub',
  email: 'email',
  email_verified: 'email_verified',
  name: 'name',
  given_name: 'given_name',
  family_name: 'family_name',
  preferred_username: 'preferred_username',
};

const OIDC_MFA = {
  mfa_amr_values: ['mfa'],
  mfa_acr_values: [
    'mfa',
    'phishing_resistant',
    'http://schemas.openid.net/pape/policies/2007/06/multi-factor',
  ],
};

export const PRESETS: Record<Adapter, Preset> = {
  generic: {
    kind: 'oidc',
    config: {
      scopes: ['openid', 'email', 'profile'],
      token_endpoint_auth_method: 'client_secret_basic',
      ...OIDC_MFA,
    },
    claims: OIDC_CLAIMS,
  },
  google: {
    kind: 'oidc',
    issuer: 'https://accounts.google.com',
    config: {
      scopes: ['openid', 'email', 'profile'],
      token_endpoint_auth_method: 'client_secret_basic',
      ...OIDC_MFA,
    },
    claims: OIDC_CLAIMS,
  },
  // Multi-tenant by default: the organizations endpoint takes work and school accounts of any
  // tenant, and its discovery document names the issuer with Microsoft's {tenantid} placeholder.
  microsoft: {
    kind: 'oidc',
    issuer: 'https://login.microsoftonline.com/{tenant}/v2.0',
    config: {
      scopes: ['openid', 'email', 'profile'],
      discovery_url: 'https://login.microsoftonline.com/organizations/v2.0/.well-known/openid-configuration',
      token_endpoint_auth_method: 'client_secret_post',
      ...OIDC_MFA,
    },
    // preferred_username is the sign-in name (UPN); email is the optional email claim.
    claims: { ...OIDC_CLAIMS, email_verified: 'xms_edov' },
  },
  github: {
    kind: 'oauth2',
    issuer: 'https://github.com',
    config: {
      scopes: ['read:user', 'user:email'],
      authorization_endpoint: 'https://github.com/login/oauth/authorize',
      token_endpoint: 'https://github.com/login/oauth/access_token',
      userinfo_endpoint: 'https://api.github.com/user',
      emails_endpoint: 'https://api.github.com/user/emails',
      token_endpoint_auth_method: 'client_secret_post',
    },
    // The profile's email is the public one; the emails endpoint says which address is verified.
    claims: {
      subject: 'id',
      email: 'email',
      email_verified: 'email_verified',
      name: 'name',
      preferred_username: 'login',
    },
  },
  gitlab: {
    kind: 'oidc',
    issuer: 'https://gitlab.com',
    config: {
      scopes: ['openid', 'email', 'profile'],
      token_endpoint_auth_method: 'client_secret_basic',
      ...OIDC_MFA,
    },
    claims: { ...OIDC_CLAIMS, preferred_username: 'nickname' },
  },
  // Apple answers by form_post once name or email is asked for, and its client secret is a JWT the
  // team's private key signs (the stored secret is that key, PEM).
  apple: {
    kind: 'oidc',
    issuer: 'https://appleid.apple.com',
    config: {
      scopes: ['openid', 'email', 'name'],
      response_mode: 'form_post',
      token_endpoint_auth_method: 'apple_client_secret',
    },
    claims: { subject: 'sub', email: 'email', email_verified: 'email_verified' },
  },
};

/** A plain OAuth 2.0 connection of the generic adapter asks for no OpenID scopes. */
const GENERIC_OAUTH2: ConnectionConfig = { token_endpoint_auth_method: 'client_secret_basic' };

/**
 * SAML (generic adapter only): the AuthnContextClassRef values that say the IdP did multi-factor
 * authentication (Entra ID and ADFS, REFEDS MFA, the SAML 2.0 two-factor classes, PAPE), and signed
 * assertions. No token endpoint: the "secret" slot holds the connection's SP private key.
 */
const SAML_TEMPLATE: ConnectionConfig = {
  token_endpoint_auth_method: 'none',
  want_assertions_signed: true,
  mfa_acr_values: [
    'http://schemas.microsoft.com/claims/multipleauthn',
    'https://refeds.org/profile/mfa',
    'urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract',
    'urn:oasis:names:tc:SAML:2.0:ac:classes:TimeSyncToken',
    'http://schemas.openid.net/pape/policies/2007/06/multi-factor',
  ],
};

/**
 * SAML claims (federation/saml-sp.ts): name_id is the subject's NameID; email, name, given_name and
 * family_name are also filled from their well-known attribute names (LDAP OIDs, the Microsoft claim
 * URIs, mail, displayName). A mapping names any other attribute by its Name. No attribute says an
 * address is verified: trust_email decides.
 */
const SAML_CLAIMS: ClaimMapping = {
  subject: 'name_id',
  email: 'email',
  name: 'name',
  given_name: 'given_name',
  family_name: 'family_name',
};

/** The configuration a connection is used with: the adapter's template, then the stored config. */
export function effectiveConfig(c: Pick<ConnectionRow, 'adapter' | 'kind' | 'config'>): ConnectionConfig {
  const template =
    c.kind === 'saml'
      ? SAML_TEMPLATE
      : c.adapter === 'generic' && c.kind === 'oauth2'
        ? GENERIC_OAUTH2
        : PRESETS[c.adapter].config;
  const defined = Object.fromEntries(
    Object.entries(c.config).filter(([, v]) => v !== undefined && v !== null),
  );
  return { ...template, ...defined };
}

/** The claim names a connection reads: the adapter's, with the stored mapping over them. */
export function effectiveClaims(c: Pick<ConnectionRow, 'adapter' | 'kind' | 'claim_mapping'>): ClaimMapping {
  return { ...(c.kind === 'saml' ? SAML_CLAIMS : PRESETS[c.adapter].claims), ...c.claim_mapping };
}
