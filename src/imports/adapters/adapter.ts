// What every migration adapter produces (spec doc 2, "Migration adapters"; docs/migration.md):
// an export of another identity system read into user-import records, the organizations those
// records belong to, and a tally of what converted, converted with loss, or was not carried over.
// Adapters are pure: they read parsed JSON and never touch the realm.

/** A membership as the source has it; roles are source role keys until the mapping is applied. */
export interface SourceMembership {
  organizationExternalId: string;
  sourceRoles: string[];
  externalId?: string;
}

/** The parameters a Firebase scrypt hash states itself (SuperTokens' `$f_scrypt$` form). */
export interface FirebaseHashParameters {
  saltSeparator: string;
  rounds: number;
  memoryCost: number;
}

/** A link to an upstream provider as the source has it; the mapping renames the alias. */
export interface SourceLink {
  sourceAlias: string;
  subject: string;
  email?: string | undefined;
}

/** One account in service.user-import.v1 shape, memberships and links still in source terms. */
export interface ConvertedUser {
  record: Record<string, unknown>;
  memberships: SourceMembership[];
  links?: SourceLink[];
  /**
   * record.password is a Firebase scrypt verifier with these parameters from its hash; it comes
   * along only when the mapping gives the project's signer key (docs/migration.md, The mapping).
   */
  firebase?: FirebaseHashParameters;
  /** Carried a TOTP seed; without --import-totp it becomes required action configure_totp. */
  hasTotp: boolean;
}

export interface ConvertedOrganization {
  externalId: string;
  kind: string;
  sourceId: string;
  proposedSlug: string;
  displayName: string;
}

export type Tally = { converted: number; converted_with_loss: number; not_carried: number };
export const TALLY_KINDS = [
  'users',
  'password_verifiers',
  'totp_factors',
  'organizations',
  'memberships',
  'roles',
  'groups',
  'linked_identities',
  'clients',
  'attributes',
  'required_actions',
] as const;
export type TallyKind = (typeof TALLY_KINDS)[number];

/** Why something did not come along as it was; a few per kind are kept for the report. */
export interface Loss {
  kind: TallyKind;
  source_id: string;
  reason: string;
}

export interface ConversionOptions {
  sourceSystem: string;
  sourceVersion?: string | undefined;
  keepAttributes: boolean;
}

export interface Conversion {
  sourceVersion: string;
  users: ConvertedUser[];
  organizations: ConvertedOrganization[];
  /** Source role keys seen on memberships, with how many memberships carry each. */
  sourceRoles: Map<string, number>;
  tally: Record<TallyKind, Tally>;
  losses: Loss[];
}

export interface Adapter {
  name: 'keycloak' | 'zitadel' | 'supertokens';
  product: string;
  /** The accepted major version, as the export or --source-version names it. */
  major: string;
  /** Whether the export states its own version (else --source-version is required). */
  versionInExport: string;
  convert(inputs: readonly unknown[], options: ConversionOptions): Conversion;
}

/** A refusal of the export as a whole; `member` names where (source_version, input[0].users). */
export class AdapterError extends Error {
  readonly member: string;
  readonly code: string;
  constructor(member: string, code: string, detail: string) {
    super(detail);
    this.member = member;
    this.code = code;
  }
}

export const MAX_LOSSES_KEPT = 200;

/** The running tally and loss list of one conversion. */
export class Ledger {
  readonly tally = Object.fromEntries(
    TALLY_KINDS.map((k) => [k, { converted: 0, converted_with_loss: 0, not_carried: 0 }]),
  ) as Record<TallyKind, Tally>;
  readonly losses: Loss[] = [];

  converted(kind: TallyKind, n = 1): void {
    this.tally[kind].converted += n;
  }
  lossy(kind: TallyKind, sourceId: string, reason: string): void {
    this.tally[kind].converted_with_loss += 1;
    this.#keep({ kind, source_id: sourceId, reason });
  }
  dropped(kind: TallyKind, sourceId: string, reason: string, n = 1): void {
    this.tally[kind].not_carried += n;
    this.#keep({ kind, source_id: sourceId, reason });
  }
  #keep(loss: Loss): void {
    if (this.losses.length < MAX_LOSSES_KEPT) this.losses.push(loss);
  }
}

/**
 * spec doc 2, Migration adapters: the version must be the accepted major, and --source-version,
 * when given, must be the export's version or a leading part of it.
 */
export function checkVersion(adapter: Adapter, stated: string | undefined, flag: string | undefined): string {
  const version = stated ?? flag;
  if (version === undefined)
    throw new AdapterError(
      'source_version',
      'required',
      `a ${adapter.product} export states no version: give --source-version (${adapter.major})`,
    );
  if (stated !== undefined && flag !== undefined && !leadingPart(flag, stated))
    throw new AdapterError(
      'source_version',
      'invalid',
      `--source-version ${flag} is not the export's version ${stated} or a leading part of it`,
    );
  if (majorOf(version) !== majorOf(adapter.major))
    throw new AdapterError(
      'source_version',
      'unsupported_version',
      `${adapter.product} ${version} is not supported: this adapter reads major ${adapter.major}`,
    );
  return version;
}

const majorOf = (v: string): string => v.replace(/^v/i, '').split('.')[0] ?? '';
function leadingPart(part: string, whole: string): boolean {
  const a = part.replace(/^v/i, '').split('.');
  const b = whole.replace(/^v/i, '').split('.');
  return a.length <= b.length && a.every((x, i) => x === b[i]);
}

// ---- small readers of untrusted JSON ------------------------------------------------------------

export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const objects = (v: unknown): Json[] => arr(v).filter(isObject);

/** A source link, or a loss when the export lacks the provider or the subject. */
export function sourceLink(
  ledger: Ledger,
  sourceId: string,
  alias: string | undefined,
  subject: string | undefined,
  name: string | undefined,
): SourceLink[] {
  if (!alias || !subject) {
    ledger.dropped('linked_identities', sourceId, 'a link without its provider or upstream user id');
    return [];
  }
  // The upstream's user name is kept only when it is an address, as the link shows its owner one.
  return [{ sourceAlias: alias, subject, email: name?.includes('@') ? name : undefined }];
}

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** A source username this service accepts as a username identifier (an email is not one). */
export const usableUsername = (v: string | undefined): string | undefined =>
  v !== undefined && USERNAME.test(v) ? v : undefined;

/** A proposed organization slug from a source name: lower case, hyphens, at most 64. */
export function slugOf(name: string, fallback: string): string {
  const s = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return s === ''
    ? fallback
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '')
        .slice(0, 64) || 'organization'
    : s;
}

/** Drops undefined members so the record is the compact JSON the import decodes. */
export function compact(o: Json): Json {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

export const METADATA_LIMIT_BYTES = 16 * 1024;

/** admin_metadata.migration with the source attributes, or undefined when over the limit. */
export function migrationMetadata(sourceSystem: string, attributes: Json): Json | undefined {
  const metadata = { migration: { source_system: sourceSystem, source_attributes: attributes } };
  return Buffer.byteLength(JSON.stringify(metadata)) <= METADATA_LIMIT_BYTES ? metadata : undefined;
}

/** Source attributes under --keep-attributes: carried, or counted as lost when over 16 KiB. */
export function carryAttributes(
  ledger: Ledger,
  options: ConversionOptions,
  sourceId: string,
  attributes: Json,
): Json | undefined {
  if (Object.keys(attributes).length === 0) return undefined;
  if (!options.keepAttributes) {
    ledger.dropped('attributes', sourceId, 'source attributes are kept only with --keep-attributes');
    return undefined;
  }
  const metadata = migrationMetadata(options.sourceSystem, attributes);
  if (metadata) ledger.converted('attributes');
  else ledger.dropped('attributes', sourceId, 'source attributes exceed 16 KiB');
  return metadata;
}

/** Tallies the source role keys of a converted user's memberships (for the mapping template). */
export function countRoles(into: Map<string, number>, user: ConvertedUser): void {
  for (const m of user.memberships) for (const r of m.sourceRoles) into.set(r, (into.get(r) ?? 0) + 1);
}
