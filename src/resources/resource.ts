// An API resource (audience) as the token service uses it (spec doc 1, API resource definition).
export type VerificationMode = 'offline' | 'bounded_online' | 'strict_online';
export type TokenFormat = 'jwt' | 'opaque';
export type Sensitivity = 'low' | 'normal' | 'high' | 'privileged';

export interface ResourceScope {
  name: string;
  requiredPermissions?: string[];
  stepUpAcr?: string;
  maxAuthAgeSeconds?: number;
  sensitivity?: Sensitivity;
}

export interface ImpersonationPolicy {
  allowedScopes: string[];
  writeScopes: string[];
  writeActions: string[];
  supportClientIds: string[];
  contractVersion: string;
}

export interface ResourceDefinition {
  /** res_… for registered resources, builtin:<name> for the built-in ones. */
  id: string;
  builtin: boolean;
  name: string;
  audience: string;
  verificationMode: VerificationMode;
  tokenFormat: TokenFormat;
  accessTokenTtlSeconds: number;
  scopes: ResourceScope[];
  requiresOrganization: boolean;
  impersonationEnabled: boolean;
  impersonationPolicy: ImpersonationPolicy | null;
  signingAlgorithm: string;
  state: 'active' | 'disabled';
  version: number;
}

/** What a client may ask of one resource (GrantSpec). */
export interface ExchangePolicy {
  acceptFromAudiences: string[];
  maxScopes: string[];
}

export interface ResourceGrant {
  clientRowId: string;
  resourceId: string;
  allowedScopes: string[];
  subjectTypes: string[];
  exchangePolicy: ExchangePolicy | null;
}
