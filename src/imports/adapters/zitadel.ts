// ZITADEL v4 data export (the admin API's ExportData answer, `{orgs: [...]}`, or the same data
// inside an import request's `data_orgs`) into user-import records (spec doc 2, "Migration
// adapters"; docs/migration.md, ZITADEL). The export states no version, so --source-version is
// required. Each organization becomes one; its human users become accounts and members of it,
// with their org-member roles and project grants as source role keys for the mapping. Machine
// users and projects are reported as not carried; identity-provider links (userLinks) come along
// under the mapping's identity_providers section.
import {
  type Adapter,
  AdapterError,
  type ConvertedOrganization,
  type ConvertedUser,
  carryAttributes,
  checkVersion,
  compact,
  countRoles,
  isObject,
  type Json,
  Ledger,
  objects,
  slugOf,
  sourceLink,
  str,
  usableUsername,
} from './adapter.ts';

/** The source role key of a plain member of a ZITADEL organization. */
export const ZITADEL_MEMBER_ROLE = 'organization:member';

function passwordOf(user: Json, ledger: Ledger, sourceId: string): Json | undefined {
  const hashed = isObject(user.hashedPassword) ? user.hashedPassword : undefined;
  const value = str(hashed?.value);
  if (!value) {
    if (str(user.password)) ledger.dropped('password_verifiers', sourceId, 'a clear-text initial password');
    return undefined;
  }
  if (/^\$2[aby]\$/.test(value)) {
    ledger.converted('password_verifiers');
    return { format: 'bcrypt', hash: value };
  }
  if (/^\$(argon2id|argon2i|scrypt|pbkdf2(-sha256|-sha512)?)\$/.test(value)) {
    ledger.converted('password_verifiers');
    return { format: 'phc', hash: value };
  }
  ledger.dropped('password_verifiers', sourceId, `password hash scheme ${value.split('$')[1] ?? 'unknown'}`);
  return undefined;
}

/** Metadata values are base64 in an export; kept decoded when they are text. */
function metadataOf(rows: Json[], userId: string): Json {
  const out: Json = {};
  for (const m of rows) {
    if (str(m.id) !== userId || !str(m.key)) continue;
    const raw = Buffer.from(String(m.value ?? ''), 'base64').toString('utf8');
    out[String(m.key)] = raw;
  }
  return out;
}

function convertOrg(
  org: Json,
  i: number,
  ctx: { sourceSystem: string; keepAttributes: boolean },
  ledger: Ledger,
) {
  const orgId = str(org.orgId);
  if (!orgId) throw new AdapterError(`input.orgs[${i}].orgId`, 'required', 'an organization without orgId');
  const name = str(isObject(org.org) ? org.org.name : undefined) ?? orgId;
  const organization: ConvertedOrganization = {
    externalId: `${ctx.sourceSystem}:organization:${orgId}`,
    kind: 'organization',
    sourceId: orgId,
    proposedSlug: slugOf(name, orgId),
    displayName: name.slice(0, 200),
  };
  ledger.converted('organizations');
  const orgRoles = new Map<string, string[]>();
  for (const m of objects(org.orgMembers))
    orgRoles.set(
      str(m.userId) ?? '',
      (Array.isArray(m.roles) ? m.roles : []).map((r) => `org-role:${String(r)}`),
    );
  const grants = new Map<string, string[]>();
  for (const g of objects(org.userGrants)) {
    const list = grants.get(str(g.userId) ?? '') ?? [];
    for (const k of Array.isArray(g.roleKeys) ? g.roleKeys : [])
      list.push(`project-role:${str(g.projectId)}:${String(k)}`);
    grants.set(str(g.userId) ?? '', list);
  }
  const metadata = objects(org.userMetadata);
  const users: ConvertedUser[] = [];
  for (const m of objects(org.machineUsers))
    ledger.dropped('users', str(m.userId) ?? '?', 'machine users become service principals, not accounts');
  const linksOf = new Map<string, Json[]>();
  for (const link of objects(org.userLinks)) {
    const list = linksOf.get(str(link.userId) ?? '') ?? [];
    list.push(link);
    linksOf.set(str(link.userId) ?? '', list);
  }
  for (const p of objects(org.projects))
    ledger.dropped('clients', str(p.projectId) ?? '?', 'projects are configured, not migrated');
  for (const h of objects(org.humanUsers)) {
    const sourceId = str(h.userId);
    const u = isObject(h.user) ? h.user : {};
    if (!sourceId) {
      ledger.dropped('users', '(no userId)', 'a user without a userId');
      continue;
    }
    const before = ledger.losses.length;
    const email = isObject(u.email) ? u.email : {};
    const phone = isObject(u.phone) ? u.phone : {};
    const profile = isObject(u.profile) ? u.profile : {};
    const username = usableUsername(str(u.userName));
    const identifiers = [
      str(email.email) && {
        type: 'email',
        value: email.email,
        verified: email.isEmailVerified === true,
        primary: true,
      },
      str(phone.phone) && { type: 'phone', value: phone.phone, verified: phone.isPhoneVerified === true },
      username && { type: 'username', value: username },
    ].filter(Boolean);
    if (identifiers.length === 0) {
      ledger.dropped('users', sourceId, 'neither an email, a phone nor a username this service accepts');
      continue;
    }
    const otp = str(u.otpCode);
    if (otp) ledger.converted('totp_factors');
    const actions = u.passwordChangeRequired === true ? ['update_password'] : [];
    if (actions.length > 0) ledger.converted('required_actions');
    const record = compact({
      source_id: sourceId,
      identifiers,
      display_name: str(profile.displayName)?.slice(0, 200),
      given_name: str(profile.firstName)?.slice(0, 100),
      family_name: str(profile.lastName)?.slice(0, 100),
      locale: str(profile.preferredLanguage),
      required_actions: actions.length > 0 ? actions : undefined,
      password: passwordOf(u, ledger, sourceId),
      totp: otp ? { secret: otp, encoding: 'base32' } : undefined,
      admin_metadata: carryAttributes(ledger, ctx, sourceId, metadataOf(metadata, sourceId)),
    });
    if (ledger.losses.length > before) ledger.lossy('users', sourceId, 'see the losses of this user');
    else ledger.converted('users');
    const sourceRoles = [
      ZITADEL_MEMBER_ROLE,
      ...(orgRoles.get(sourceId) ?? []),
      ...(grants.get(sourceId) ?? []),
    ];
    const links = (linksOf.get(sourceId) ?? []).flatMap((l) =>
      sourceLink(ledger, sourceId, str(l.idpId), str(l.providedUserId), str(l.providedUserName)),
    );
    linksOf.delete(sourceId);
    users.push({
      record,
      memberships: [{ organizationExternalId: organization.externalId, sourceRoles }],
      links,
      hasTotp: otp !== undefined,
    });
  }
  for (const [userId, list] of linksOf)
    ledger.dropped(
      'linked_identities',
      userId || '?',
      'a link of a user this export does not carry',
      list.length,
    );
  return { organization, users };
}

export const zitadelAdapter: Adapter = {
  name: 'zitadel',
  product: 'ZITADEL',
  major: 'v4',
  versionInExport: '(none: --source-version)',
  convert(inputs, options) {
    const ledger = new Ledger();
    const version = checkVersion(zitadelAdapter, undefined, options.sourceVersion);
    const users: ConvertedUser[] = [];
    const organizations: ConvertedOrganization[] = [];
    const sourceRoles = new Map<string, number>();
    inputs.forEach((input, n) => {
      const data = isObject(input) && isObject(input.data_orgs) ? input.data_orgs : input;
      if (!isObject(data) || !Array.isArray(data.orgs))
        throw new AdapterError(`input[${n}]`, 'invalid', 'not a ZITADEL data export (no orgs member)');
      objects(data.orgs).forEach((org, i) => {
        const out = convertOrg(org, i, options, ledger);
        organizations.push(out.organization);
        for (const u of out.users) {
          users.push(u);
          countRoles(sourceRoles, u);
        }
      });
    });
    return {
      sourceVersion: version,
      users,
      organizations,
      sourceRoles,
      tally: ledger.tally,
      losses: ledger.losses,
    };
  },
};
