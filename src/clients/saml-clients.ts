// SAML service providers: clients of type saml (docs/saml-idp.md). The client row carries what
// every client has (client_id, name, state, MFA policy); its SAML settings live in saml_clients
// (migration 0052). Its one redirect URI is derived (redirectUrisOf): the sign-in transaction
// comes back to ProudAuth's own SAML continuation, which answers the SP.
import { X509Certificate } from 'node:crypto';
import Type, { type Static } from 'typebox';
import { maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { isUniqueViolation } from '../platform/db/pg-errors.ts';
import type { FieldError } from '../platform/http/problem.ts';
import type { CamelKeys } from '../platform/http/route-schema.ts';
import { pushReceiverUriProblem } from './client-rules.ts';
import type { Environment } from './redirect-uri.ts';

export const NAME_ID_FORMATS = ['persistent', 'email', 'transient'] as const;
export type NameIdFormat = (typeof NAME_ID_FORMATS)[number];
/** Attributes a SAML client may ask for; `organization` is the organization signed in to. */
export const SAML_ATTRIBUTES = ['email', 'name', 'given_name', 'family_name', 'organization'] as const;
export type SamlAttribute = (typeof SAML_ATTRIBUTES)[number];
export const MAX_ACS_URLS = 20;
const MAX_ENTITY_ID_CHARS = 1024;
const MAX_CERTIFICATE_CHARS = 16 * 1024;

/** Where every SAML client's sign-in transaction comes back to (its derived redirect URI). */
export const SAML_CONTINUE_PATH = '/saml/continue';
export const samlContinueUrl = (publicOrigin: string) => `${publicOrigin}${SAML_CONTINUE_PATH}`;

const orNull = <S extends ReturnType<typeof Type.String>>(s: S) =>
  Type.Optional(Type.Union([s, Type.Null()]));
const attributeName = () => orNull(Type.String({ minLength: 1, maxLength: 256 }));
const certificate = () => orNull(Type.String({ maxLength: MAX_CERTIFICATE_CHARS }));
const entityId = () => Type.String({ minLength: 1, maxLength: MAX_ENTITY_ID_CHARS });
const acsUrls = () => Type.Array(Type.String({ maxLength: 2048 }));
const optionalMembers = () => ({
  name_id_format: Type.Optional(Type.Enum([...NAME_ID_FORMATS])),
  allowed_name_id_formats: Type.Optional(Type.Array(Type.Enum([...NAME_ID_FORMATS]))),
  signing_certificate: certificate(),
  encryption_certificate: certificate(),
  attributes: Type.Optional(Type.Array(Type.Enum([...SAML_ATTRIBUTES]))),
  groups_attribute: attributeName(),
  roles_attribute: attributeName(),
  slo_url: orNull(Type.String({ maxLength: 2048 })),
});

/** The `saml` member of a SAML client's body (clients.schema.ts); value rules in checkSamlSettings. */
export const SamlSettingsBody = Type.Object(
  { entity_id: entityId(), acs_urls: acsUrls(), ...optionalMembers() },
  { additionalProperties: false },
);
export type SamlSettingsInput = CamelKeys<Static<typeof SamlSettingsBody>>;
/** PATCH of a SAML client: every member optional, the others kept (mergeSamlSettings). */
export const SamlSettingsPatchBody = Type.Object(
  { entity_id: Type.Optional(entityId()), acs_urls: Type.Optional(acsUrls()), ...optionalMembers() },
  { additionalProperties: false },
);
export type SamlSettingsPatch = CamelKeys<Static<typeof SamlSettingsPatchBody>>;

/** The settings as the administration API shows them (presentSamlSettings). */
export const SamlSettingsView = Type.Object(
  {
    entity_id: Type.String(),
    acs_urls: Type.Array(Type.String()),
    name_id_format: Type.Enum([...NAME_ID_FORMATS]),
    signing_certificate: Type.Union([Type.String(), Type.Null()]),
    encryption_certificate: Type.Union([Type.String(), Type.Null()]),
    attributes: Type.Array(Type.Enum([...SAML_ATTRIBUTES])),
    allowed_name_id_formats: Type.Array(Type.Enum([...NAME_ID_FORMATS])),
    groups_attribute: Type.Union([Type.String(), Type.Null()]),
    roles_attribute: Type.Union([Type.String(), Type.Null()]),
    slo_url: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

export interface SamlSettings {
  entityId: string;
  acsUrls: string[];
  nameIdFormat: NameIdFormat;
  /** Formats a NameIDPolicy may ask for; always holds nameIdFormat. */
  allowedNameIdFormats: NameIdFormat[];
  signingCertificate: string | null;
  /** PEM RSA certificate the assertions are encrypted to, or null (not encrypted). */
  encryptionCertificate: string | null;
  attributes: SamlAttribute[];
  /** Attribute names for the account's groups and roles, or null (not sent). */
  groupsAttribute: string | null;
  rolesAttribute: string | null;
  /** Single logout URL (HTTP-Redirect binding), or null. */
  sloUrl: string | null;
}

export const samlSettingsOf = (input: SamlSettingsInput): SamlSettings => {
  const nameIdFormat = input.nameIdFormat ?? 'persistent';
  return {
    entityId: input.entityId,
    acsUrls: input.acsUrls,
    nameIdFormat,
    allowedNameIdFormats: input.allowedNameIdFormats ?? [nameIdFormat],
    signingCertificate: input.signingCertificate ?? null,
    encryptionCertificate: input.encryptionCertificate ?? null,
    attributes: input.attributes ?? ['email', 'name'],
    groupsAttribute: input.groupsAttribute ?? null,
    rolesAttribute: input.rolesAttribute ?? null,
    sloUrl: input.sloUrl ?? null,
  };
};

/** The settings after a PATCH: given members replace, absent ones stay, null clears. */
export function mergeSamlSettings(s: SamlSettings, p: SamlSettingsPatch): SamlSettings {
  const keep = <T>(v: T | undefined, old: T): T => (v === undefined ? old : v);
  const nameIdFormat = p.nameIdFormat ?? s.nameIdFormat;
  return {
    entityId: p.entityId ?? s.entityId,
    acsUrls: p.acsUrls ?? s.acsUrls,
    nameIdFormat,
    // A new default format alone keeps the allowed ones, with the new default among them.
    allowedNameIdFormats: p.allowedNameIdFormats ?? [...new Set([nameIdFormat, ...s.allowedNameIdFormats])],
    signingCertificate: keep(p.signingCertificate, s.signingCertificate),
    encryptionCertificate: keep(p.encryptionCertificate, s.encryptionCertificate),
    attributes: p.attributes ?? s.attributes,
    groupsAttribute: keep(p.groupsAttribute, s.groupsAttribute),
    rolesAttribute: keep(p.rolesAttribute, s.rolesAttribute),
    sloUrl: keep(p.sloUrl, s.sloUrl),
  };
}

/** Field errors of a SAML client's settings (names under `saml.`). */
export function checkSamlSettings(s: SamlSettings, env: Environment): FieldError[] {
  const errors: FieldError[] = [];
  if (/[\p{Cc}\s]/u.test(s.entityId))
    errors.push({ field: 'saml.entity_id', code: 'invalid', detail: 'no spaces or control characters' });
  if (s.acsUrls.length < 1) errors.push({ field: 'saml.acs_urls', code: 'too_few', detail: 'at least 1' });
  if (s.acsUrls.length > MAX_ACS_URLS)
    errors.push({ field: 'saml.acs_urls', code: 'too_many', detail: `at most ${MAX_ACS_URLS}` });
  const seen = new Set<string>();
  s.acsUrls.forEach((u, i) => {
    // The same URL rules as a back-channel receiver's (client-rules.ts).
    const why = seen.has(u) ? 'repeats an earlier item' : pushReceiverUriProblem(u, env);
    if (why) errors.push({ field: `saml.acs_urls[${i}]`, code: 'invalid_uri', detail: why });
    seen.add(u);
  });
  const sloProblem = s.sloUrl === null ? null : pushReceiverUriProblem(s.sloUrl, env);
  if (sloProblem) errors.push({ field: 'saml.slo_url', code: 'invalid_uri', detail: sloProblem });
  if (!s.allowedNameIdFormats.includes(s.nameIdFormat))
    errors.push({
      field: 'saml.allowed_name_id_formats',
      code: 'invalid',
      detail: 'must hold name_id_format',
    });
  if (new Set(s.allowedNameIdFormats).size !== s.allowedNameIdFormats.length)
    errors.push({ field: 'saml.allowed_name_id_formats', code: 'duplicate', detail: 'each format once' });
  for (const field of ['groups_attribute', 'roles_attribute'] as const) {
    const v = field === 'groups_attribute' ? s.groupsAttribute : s.rolesAttribute;
    if (v !== null && /[\p{Cc}]/u.test(v))
      errors.push({ field: `saml.${field}`, code: 'invalid', detail: 'no control characters' });
  }
  if (s.groupsAttribute !== null && s.groupsAttribute === s.rolesAttribute)
    errors.push({
      field: 'saml.roles_attribute',
      code: 'duplicate',
      detail: 'another name than groups_attribute',
    });
  if (new Set(s.attributes).size !== s.attributes.length)
    errors.push({ field: 'saml.attributes', code: 'duplicate', detail: 'each attribute once' });
  for (const [field, pem] of [
    ['signing_certificate', s.signingCertificate],
    ['encryption_certificate', s.encryptionCertificate],
  ] as const) {
    const why = pem === null ? null : rsaCertificateProblem(pem);
    if (why) errors.push({ field: `saml.${field}`, code: 'invalid', detail: why });
  }
  return errors;
}

function rsaCertificateProblem(pem: string): string | null {
  try {
    return new X509Certificate(pem).publicKey.asymmetricKeyType === 'rsa' ? null : 'an RSA certificate';
  } catch {
    return 'a PEM X.509 certificate';
  }
}

interface SamlClientRow {
  entity_id: string;
  acs_urls: string[];
  name_id_format: NameIdFormat;
  signing_certificate: string | null;
  encryption_certificate: string | null;
  attributes: SamlAttribute[];
  slo_url: string | null;
  allowed_name_id_formats: NameIdFormat[] | null;
  groups_attribute: string | null;
  roles_attribute: string | null;
}

const settingsOfRow = (r: SamlClientRow): SamlSettings => ({
  entityId: r.entity_id,
  acsUrls: r.acs_urls,
  nameIdFormat: r.name_id_format,
  signingCertificate: r.signing_certificate,
  encryptionCertificate: r.encryption_certificate,
  attributes: r.attributes,
  sloUrl: r.slo_url,
  allowedNameIdFormats: r.allowed_name_id_formats ?? [r.name_id_format],
  groupsAttribute: r.groups_attribute,
  rolesAttribute: r.roles_attribute,
});

/** Inserts the settings; false when another client of the realm has this entity id. */
export async function insertSamlSettings(
  tx: Tx,
  realmId: string,
  clientRowId: string,
  s: SamlSettings,
): Promise<boolean> {
  const r = await tx.query(
    `insert into saml_clients (realm_id, client_row_id, entity_id, acs_urls, name_id_format, signing_certificate,
       attributes, slo_url, allowed_name_id_formats, groups_attribute, roles_attribute, encryption_certificate)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) on conflict (realm_id, entity_id) do nothing`,
    [realmId, clientRowId, ...columnsOf(s)],
  );
  return r.rowCount === 1;
}

const columnsOf = (s: SamlSettings) => [
  s.entityId,
  s.acsUrls,
  s.nameIdFormat,
  s.signingCertificate,
  s.attributes,
  s.sloUrl,
  s.allowedNameIdFormats,
  s.groupsAttribute,
  s.rolesAttribute,
  s.encryptionCertificate,
];

/** Replaces the settings; false when another client of the realm has the new entity id. */
export async function updateSamlSettings(
  tx: Tx,
  realmId: string,
  clientRowId: string,
  s: SamlSettings,
): Promise<boolean> {
  try {
    await tx.query(
      `update saml_clients set entity_id = $3, acs_urls = $4, name_id_format = $5, signing_certificate = $6,
         attributes = $7, slo_url = $8, allowed_name_id_formats = $9, groups_attribute = $10, roles_attribute = $11,
         encryption_certificate = $12
       where realm_id = $1 and client_row_id = $2`,
      [realmId, clientRowId, ...columnsOf(s)],
    );
  } catch (e) {
    // The caller answers 409 and its transaction rolls back (the statement ended it in PostgreSQL).
    if (isUniqueViolation(e)) return false;
    throw e;
  }
  return true;
}

export async function findSamlSettings(
  q: Queryable,
  realmId: string,
  clientRowId: string,
): Promise<SamlSettings | null> {
  const r = await maybeOne<SamlClientRow>(
    q,
    'select * from saml_clients where realm_id = $1 and client_row_id = $2',
    [realmId, clientRowId],
  );
  return r ? settingsOfRow(r) : null;
}

/** The SAML client an AuthnRequest's Issuer names, with its client_id and state. */
export async function findSamlClientByEntityId(
  q: Queryable,
  realmId: string,
  entityId: string,
): Promise<{ clientId: string; clientRowId: string; state: string; settings: SamlSettings } | null> {
  const r = await maybeOne<SamlClientRow & { client_id: string; client_row_id: string; state: string }>(
    q,
    `select s.*, c.client_id, c.state from saml_clients s
       join clients c on c.realm_id = s.realm_id and c.id = s.client_row_id
      where s.realm_id = $1 and s.entity_id = $2`,
    [realmId, entityId],
  );
  return r
    ? { clientId: r.client_id, clientRowId: r.client_row_id, state: r.state, settings: settingsOfRow(r) }
    : null;
}

export const presentSamlSettings = (s: SamlSettings) => ({
  entity_id: s.entityId,
  acs_urls: s.acsUrls,
  name_id_format: s.nameIdFormat,
  signing_certificate: s.signingCertificate,
  encryption_certificate: s.encryptionCertificate,
  attributes: s.attributes,
  allowed_name_id_formats: s.allowedNameIdFormats,
  groups_attribute: s.groupsAttribute,
  roles_attribute: s.rolesAttribute,
  slo_url: s.sloUrl,
});
