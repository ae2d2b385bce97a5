// From a conversion to what is posted (spec doc 2, "Migration adapters" rules 2 and 4): the
// reviewed mapping of organizations to slugs and source roles to organization roles, the
// user-import documents in batches, the counts the reconciliation expects, and the report.
import {
  type Adapter,
  AdapterError,
  type Conversion,
  isObject,
  type Json,
  type Loss,
  MAX_LOSSES_KEPT,
  TALLY_KINDS,
} from './adapter.ts';

export const MAPPING_FORMAT = 'service.migration-mapping.v1';
export const REPORT_FORMAT = 'service.migration-report.v1';
export const IMPORT_FORMAT = 'service.user-import.v1';

/**
 * organizations: external id -> {slug}; roles: source role key -> organization role names;
 * identity_providers: source provider alias -> the alias of this realm's connection (null leaves it).
 */
export interface Mapping {
  organizations: Record<string, { slug?: string }>;
  roles: Record<string, string[]>;
  identityProviders: Record<string, string | null>;
  /** The Firebase project's parameters for firebase_scrypt hashes; the signer key is a secret. */
  firebaseScrypt?: FirebaseProject;
}

/** As the user-import document's password_hash_parameters.firebase_scrypt, members optional but the key. */
export interface FirebaseProject {
  signer_key: string;
  salt_separator?: string;
  rounds?: number;
  memory_cost?: number;
}

/** Source role keys that mean "a plain member" in each adapter map to the built-in member role. */
const MEMBER_KEYS = new Set(['organization:member', 'tenant:member']);

export function defaultMapping(): Mapping {
  return { organizations: {}, roles: {}, identityProviders: {} };
}

/** The template --write-mapping-template writes: every organization and source role, to review. */
export function mappingTemplate(c: Conversion): Json {
  return {
    format: MAPPING_FORMAT,
    organizations: Object.fromEntries(
      c.organizations.map((o) => [o.externalId, { slug: o.proposedSlug, display_name: o.displayName }]),
    ),
    roles: Object.fromEntries(
      [...c.sourceRoles.keys()].sort().map((k) => [k, MEMBER_KEYS.has(k) ? ['member'] : []]),
    ),
    // Each source provider proposes a connection of the same alias; a reviewer renames or nulls it.
    identity_providers: Object.fromEntries(
      [...new Set(c.users.flatMap((u) => (u.links ?? []).map((l) => l.sourceAlias)))]
        .sort()
        .map((a) => [a, a]),
    ),
    // Firebase scrypt hashes need the project's signer key, which no export carries: fill it in.
    ...(c.users.some((u) => u.firebase)
      ? { password_hash_parameters: { firebase_scrypt: { signer_key: null } } }
      : {}),
  };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function readFirebaseProject(v: unknown): FirebaseProject | undefined {
  if (v === undefined || v === null) return undefined;
  const at = 'mapping.password_hash_parameters.firebase_scrypt';
  if (!isObject(v)) throw new AdapterError(at, 'invalid', 'an object with signer_key');
  if (v.signer_key === null || v.signer_key === undefined) return undefined;
  if (typeof v.signer_key !== 'string' || v.signer_key === '' || !BASE64.test(v.signer_key))
    throw new AdapterError(`${at}.signer_key`, 'invalid', "the project's base64 signer key");
  if (
    v.salt_separator !== undefined &&
    (typeof v.salt_separator !== 'string' || !BASE64.test(v.salt_separator))
  )
    throw new AdapterError(`${at}.salt_separator`, 'invalid', 'base64');
  const int = (name: 'rounds' | 'memory_cost', max: number) => {
    const n = v[name];
    if (n === undefined) return undefined;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > max)
      throw new AdapterError(`${at}.${name}`, 'invalid', `an integer 1..${max}`);
    return n;
  };
  const rounds = int('rounds', 32);
  const memoryCost = int('memory_cost', 20);
  return {
    signer_key: v.signer_key,
    ...(typeof v.salt_separator === 'string' ? { salt_separator: v.salt_separator } : {}),
    ...(rounds !== undefined ? { rounds } : {}),
    ...(memoryCost !== undefined ? { memory_cost: memoryCost } : {}),
  };
}

/** A mapping file as read; refuses what it cannot use rather than guessing. */
export function readMapping(doc: unknown): Mapping {
  if (!isObject(doc) || doc.format !== MAPPING_FORMAT)
    throw new AdapterError('mapping', 'invalid', `a mapping file has format ${MAPPING_FORMAT}`);
  const out = defaultMapping();
  for (const [ext, v] of Object.entries(isObject(doc.organizations) ? doc.organizations : {})) {
    if (!isObject(v))
      throw new AdapterError(`mapping.organizations.${ext}`, 'invalid', 'an object with slug');
    if (v.slug !== undefined && (typeof v.slug !== 'string' || !/^[a-z0-9-]{1,64}$/.test(v.slug)))
      throw new AdapterError(
        `mapping.organizations.${ext}.slug`,
        'invalid',
        'lower-case letters, digits and hyphens',
      );
    out.organizations[ext] = typeof v.slug === 'string' ? { slug: v.slug } : {};
  }
  for (const [key, v] of Object.entries(isObject(doc.roles) ? doc.roles : {})) {
    const list = v === null ? [] : Array.isArray(v) ? v : [v];
    if (!list.every((r) => typeof r === 'string' && r.length > 0 && r.length <= 100))
      throw new AdapterError(`mapping.roles.${key}`, 'invalid', 'a role name or a list of them');
    out.roles[key] = list as string[];
  }
  const providers = doc.identity_providers;
  for (const [alias, v] of Object.entries(isObject(providers) ? providers : {})) {
    if (v !== null && (typeof v !== 'string' || v.length === 0 || v.length > 64))
      throw new AdapterError(
        `mapping.identity_providers.${alias}`,
        'invalid',
        "the alias of this realm's connection, or null",
      );
    out.identityProviders[alias] = v;
  }
  const hashParameters = isObject(doc.password_hash_parameters) ? doc.password_hash_parameters : {};
  const firebase = readFirebaseProject(hashParameters.firebase_scrypt);
  if (firebase) out.firebaseScrypt = firebase;
  return out;
}

export interface DocumentOptions {
  sourceSystem: string;
  importTotp: boolean;
  trustEmailVerification: boolean;
  verificationReason?: string | undefined;
  allowOwnerRoles: boolean;
  batchSize: number;
  /**
   * Most bytes of users in one document (default BATCH_BYTES): a batch also ends before its users
   * would pass it, so every document fits the service's default request body limit.
   */
  batchBytes?: number;
}

/**
 * Users' bytes per document: the default body limit (256 KiB) less room for the document's own
 * members. 500 Keycloak users with PBKDF2-SHA256 credentials are about 280 KiB.
 */
export const BATCH_BYTES = 240 * 1024;

export interface Expected {
  expected_users: number;
  expected_memberships: number;
  expected_password_verifiers: number;
  expected_totp_factors: number;
}

export interface Built {
  documents: Json[];
  expected: Expected;
  /** Organization role names the mapping hands out, lower case. */
  mappedRoles: string[];
  /** Source role keys with no mapping: their memberships arrive without those roles. */
  unmappedRoles: string[];
  /** Links carried into the documents, and those left behind for want of a mapped alias. */
  links: { carried: number; left: Loss[] };
  /** Firebase scrypt verifiers left behind (no signer key, or parameters other than the project's). */
  firebaseLeft: Loss[];
}

/** Roles of a source membership through the mapping; the member keys default to member. */
function mappedRoles(mapping: Mapping, keys: readonly string[]): string[] {
  const out = new Set<string>();
  for (const k of keys)
    for (const r of mapping.roles[k] ?? (MEMBER_KEYS.has(k) ? ['member'] : [])) out.add(r);
  return [...out];
}

export function buildDocuments(c: Conversion, mapping: Mapping, o: DocumentOptions): Built {
  const expected: Expected = {
    expected_users: 0,
    expected_memberships: 0,
    expected_password_verifiers: 0,
    expected_totp_factors: 0,
  };
  const handed = new Set<string>();
  const unmapped = new Set<string>();
  const links: Built['links'] = { carried: 0, left: [] };
  const firebaseLeft: Loss[] = [];
  const project = firebaseProject(c, mapping);
  let firebaseCarried = false;
  const records = c.users.map((u) => {
    const record: Json = { ...u.record };
    if (u.firebase) {
      const why = !project
        ? "Firebase scrypt needs the project's signer key: give it in the mapping's password_hash_parameters.firebase_scrypt"
        : u.firebase.rounds !== project.rounds ||
            u.firebase.memoryCost !== project.memory_cost ||
            u.firebase.saltSeparator !== project.salt_separator
          ? "the hash's rounds, memory cost or salt separator differ from the project's"
          : null;
      if (why) {
        delete record.password;
        firebaseLeft.push({ kind: 'password_verifiers', source_id: String(record.source_id), reason: why });
      } else firebaseCarried = true;
    }
    const carried = (u.links ?? []).flatMap((l) => {
      const alias = mapping.identityProviders[l.sourceAlias];
      if (!alias) {
        links.left.push({
          kind: 'linked_identities',
          source_id: String(record.source_id),
          reason: `provider ${l.sourceAlias} has no connection in the mapping's identity_providers`,
        });
        return [];
      }
      return [
        {
          connection_alias: alias,
          upstream_subject: l.subject,
          ...(l.email ? { upstream_email: l.email } : {}),
        },
      ];
    });
    links.carried += carried.length;
    if (carried.length > 0) record.linked_identities = carried;
    if (u.hasTotp && !o.importTotp) {
      // spec doc 2, Migration adapters, --import-totp: without it the user enrolls again.
      delete record.totp;
      const actions = new Set([
        ...((record.required_actions as string[] | undefined) ?? []),
        'configure_totp',
      ]);
      record.required_actions = [...actions];
    }
    if (u.memberships.length > 0)
      record.memberships = u.memberships.map((m) => {
        for (const k of m.sourceRoles) if (!(k in mapping.roles) && !MEMBER_KEYS.has(k)) unmapped.add(k);
        const roles = mappedRoles(mapping, m.sourceRoles);
        for (const r of roles) handed.add(r.toLowerCase());
        const slug = mapping.organizations[m.organizationExternalId]?.slug;
        return {
          ...(slug ? { organization_slug: slug } : { organization_external_id: m.organizationExternalId }),
          roles,
          ...(m.externalId ? { external_id: m.externalId } : {}),
        };
      });
    expected.expected_users += 1;
    expected.expected_memberships += u.memberships.length;
    if (record.password !== undefined) expected.expected_password_verifiers += 1;
    if (record.totp !== undefined) expected.expected_totp_factors += 1;
    return record;
  });
  const documents: Json[] = [];
  for (const users of batches(records, o.batchSize, o.batchBytes ?? BATCH_BYTES))
    documents.push({
      format: IMPORT_FORMAT,
      source_system: o.sourceSystem,
      ...(o.trustEmailVerification
        ? { trust_email_verification: true, verification_reason: o.verificationReason }
        : {}),
      ...(o.importTotp ? { import_totp: true } : {}),
      ...(o.allowOwnerRoles ? { allow_owner_roles: true } : {}),
      ...(project && firebaseCarried ? { password_hash_parameters: { firebase_scrypt: project } } : {}),
      users,
    });
  return {
    documents,
    expected,
    mappedRoles: [...handed].sort(),
    unmappedRoles: [...unmapped].sort(),
    links,
    firebaseLeft,
  };
}

/**
 * The Firebase project's parameters: the mapping's signer key, and its salt separator, rounds and
 * memory cost or else those the first Firebase hash states.
 */
function firebaseProject(c: Conversion, mapping: Mapping): Required<FirebaseProject> | undefined {
  const given = mapping.firebaseScrypt;
  const first = c.users.find((u) => u.firebase)?.firebase;
  if (!given || !first) return undefined;
  return {
    signer_key: given.signer_key,
    salt_separator: given.salt_separator ?? first.saltSeparator,
    rounds: given.rounds ?? first.rounds,
    memory_cost: given.memory_cost ?? first.memoryCost,
  };
}

/** Records in order, at most `size` and (unless one alone is larger) `bytes` of JSON per batch. */
function batches(records: Json[], size: number, bytes: number): Json[][] {
  const out: Json[][] = [];
  let batch: Json[] = [];
  let used = 0;
  for (const r of records) {
    const n = Buffer.byteLength(JSON.stringify(r)) + 1;
    if (batch.length > 0 && (batch.length >= size || used + n > bytes)) {
      out.push(batch);
      batch = [];
      used = 0;
    }
    batch.push(r);
    used += n;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

/** The conversion part of the report (service.migration-report.v1). */
export function conversionReport(adapter: Adapter, c: Conversion, sourceSystem: string, built: Built): Json {
  // Memberships all come along (their organization is reused or created); a membership's source
  // role comes along only when the mapping (or the member default) translates it.
  c.tally.memberships.converted = built.expected.expected_memberships;
  for (const [key, n] of c.sourceRoles)
    if (built.unmappedRoles.includes(key)) c.tally.roles.not_carried += n;
    else c.tally.roles.converted += n;
  c.tally.linked_identities.converted = built.links.carried;
  c.tally.linked_identities.not_carried += built.links.left.length;
  for (const loss of built.links.left) if (c.losses.length < MAX_LOSSES_KEPT) c.losses.push(loss);
  c.tally.password_verifiers.converted -= built.firebaseLeft.length;
  c.tally.password_verifiers.not_carried += built.firebaseLeft.length;
  for (const loss of built.firebaseLeft) if (c.losses.length < MAX_LOSSES_KEPT) c.losses.push(loss);
  return {
    format: REPORT_FORMAT,
    adapter: adapter.name,
    source_system: sourceSystem,
    source_version: c.sourceVersion,
    counts: Object.fromEntries(TALLY_KINDS.map((k) => [k, c.tally[k]])),
    losses: c.losses,
    unmapped_roles: built.unmappedRoles,
    documents: built.documents.length,
    import: { expected: built.expected },
  };
}

export interface OrganizationPlan {
  external_id: string;
  slug: string;
  action: 'reuse' | 'create' | 'conflict';
  organization_id?: string;
  detail?: string;
}

export interface KnownOrganization {
  id: string;
  slug: string;
}

/**
 * Rule 2: an organization is reused when its external id matches or when the mapping names its
 * slug; one that only shares the proposed slug is a conflict; otherwise it is created.
 */
export function planOrganizations(
  c: Conversion,
  mapping: Mapping,
  byExternalId: (externalId: string) => KnownOrganization | undefined,
  bySlug: (slug: string) => KnownOrganization | undefined,
): OrganizationPlan[] {
  return c.organizations.map((o): OrganizationPlan => {
    const base = { external_id: o.externalId };
    const found = byExternalId(o.externalId);
    if (found) return { ...base, slug: found.slug, action: 'reuse', organization_id: found.id };
    const mapped = mapping.organizations[o.externalId]?.slug;
    const slug = mapped ?? o.proposedSlug;
    const taken = bySlug(slug.toLowerCase());
    if (taken && mapped) return { ...base, slug, action: 'reuse', organization_id: taken.id };
    if (taken)
      return {
        ...base,
        slug,
        action: 'conflict',
        organization_id: taken.id,
        detail: `organization ${taken.id} already has slug ${slug}: name it in the mapping to reuse it, or choose another slug`,
      };
    return { ...base, slug, action: 'create' };
  });
}
