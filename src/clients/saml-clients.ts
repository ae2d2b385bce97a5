// SAML service providers: clients of type saml (docs/saml-idp.md). The client row carries what
// every client has (client_id, name, state, MFA policy); its SAML settings live in saml_clients
// (migration 0052). Its one redirect URI is derived (redirectUrisOf): the sign-in transaction
// comes back to ProudAuth's own SAML continuation, which answers the SP.
import { X509Certificate } from 'node:crypto';
import Type, { type Static } from 'typebox';
import { maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
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

/** The `saml` member of a SAML client's body (clients.schema.ts); value rules in checkSamlSettings. */
export const SamlSettingsBody = Type.Object(
  {
    entity_id: Type.String({ minLength: 1, maxLength: MAX_ENTITY_ID_CHARS }),
    acs_urls: Type.Array(Type.String({ maxLength: 2048 })),
    name_id_format: Type.Optional(Type.Enum([...NAME_ID_FORMATS])),
    signing_certificate: Type.Optional(
      Type.Union([Type.String({ maxLength: MAX_CERTIFICATE_CHARS }), Type.Null()]),
    ),
    attributes: Type.Optional(Type.Array(Type.Enum([...SAML_ATTRIBUTES]))),
  },
  { additionalProperties: false },
);
export type SamlSettingsInput = CamelKeys<Static<typeof SamlSettingsBody>>;

/** The settings as the administration API shows them. */
export const SamlSettingsView = Type.Object(
  {
    entity_id: Type.String(),
    acs_urls: Type.Array(Type.String()),
    name_id_format: Type.Enum([...NAME_ID_FORMATS]),
    signing_certificate: Type.Union([Type.String(), Type.Null()]),
    attributes: Type.Array(Type.Enum([...SAML_ATTRIBUTES])),
  },
  { additionalProperties: false },
);

export interface SamlSettings {
  entityId: string;
  acsUrls: string[];
  nameIdFormat: NameIdFormat;
  signingCertificate: string | null;
  attributes: SamlAttribute[];
}

export const samlSettingsOf = (input: SamlSettingsInput): SamlSettings => ({
  entityId: input.entityId,
  acsUrls: input.acsUrls,
  nameIdFormat: input.nameIdFormat ?? 'persistent',
  signingCertificate: input.signingCertificate ?? null,
  attributes: input.attributes ?? ['email', 'name'],
});

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
  if (new Set(s.attributes).size !== s.attributes.length)
    errors.push({ field: 'saml.attributes', code: 'duplicate', detail: 'each attribute once' });
  if (s.signingCertificate !== null) {
    try {
      const cert = new X509Certificate(s.signingCertificate);
      if (cert.publicKey.asymmetricKeyType !== 'rsa')
        errors.push({ field: 'saml.signing_certificate', code: 'invalid', detail: 'an RSA certificate' });
    } catch {
      errors.push({ field: 'saml.signing_certificate', code: 'invalid', detail: 'a PEM X.509 certificate' });
    }
  }
  return errors;
}

interface SamlClientRow {
  entity_id: string;
  acs_urls: string[];
  name_id_format: NameIdFormat;
  signing_certificate: string | null;
  attributes: SamlAttribute[];
}

const settingsOfRow = (r: SamlClientRow): SamlSettings => ({
  entityId: r.entity_id,
  acsUrls: r.acs_urls,
  nameIdFormat: r.name_id_format,
  signingCertificate: r.signing_certificate,
  attributes: r.attributes,
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
       attributes) values ($1, $2, $3, $4, $5, $6, $7) on conflict (realm_id, entity_id) do nothing`,
    [realmId, clientRowId, s.entityId, s.acsUrls, s.nameIdFormat, s.signingCertificate, s.attributes],
  );
  return r.rowCount === 1;
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
  attributes: s.attributes,
});
