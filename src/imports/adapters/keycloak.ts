// Keycloak 26 realm export (a realm's JSON from `kc.sh export` or the admin console) into
// user-import records (spec doc 2, "Migration adapters"; docs/migration.md, Keycloak). Users keep
// their id, email, username, names, enabled flag, password credential (pbkdf2*, argon2) and OTP
// credential (TOTP); organizations keep id, alias and name, their members become memberships.
// Groups, realm roles without a mapping, clients, HOTP and WebAuthn are reported as not carried.
import {
  type Adapter,
  AdapterError,
  arr,
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

const PASSWORD_ALGORITHMS = new Set(['pbkdf2', 'pbkdf2-sha256', 'pbkdf2-sha512', 'argon2']);
/** Built-in realm roles every Keycloak user holds; they carry no meaning here. */
const BUILT_IN_ROLE = /^(default-roles-.*|offline_access|uma_authorization)$/;
const REQUIRED_ACTIONS: Record<string, string> = {
  UPDATE_PASSWORD: 'update_password',
  CONFIGURE_TOTP: 'configure_totp',
  VERIFY_EMAIL: 'verify_email',
};
const OTP_ALGORITHMS: Record<string, string> = {
  HmacSHA1: 'SHA1',
  HmacSHA256: 'SHA256',
  HmacSHA512: 'SHA512',
};
/** The source role key every Keycloak organization member has (Keycloak has no member roles). */
export const KEYCLOAK_MEMBER_ROLE = 'organization:member';

/** credentialData/secretData are JSON strings in an export; objects are accepted too. */
function parsed(v: unknown): Json | null {
  if (isObject(v)) return v;
  if (typeof v !== 'string') return null;
  try {
    const o = JSON.parse(v) as unknown;
    return isObject(o) ? o : null;
  } catch {
    return null;
  }
}

function credentials(user: Json, ledger: Ledger, sourceId: string) {
  let password: Json | undefined;
  let totp: Json | undefined;
  for (const c of objects(user.credentials)) {
    const type = str(c.type);
    const data = parsed(c.credentialData);
    if (type === 'password') {
      const algorithm = str(data?.algorithm) ?? '';
      if (!PASSWORD_ALGORITHMS.has(algorithm) || !parsed(c.secretData)) {
        ledger.dropped('password_verifiers', sourceId, `password algorithm ${algorithm || 'unknown'}`);
        continue;
      }
      password = { format: 'keycloak', credential_data: c.credentialData, secret_data: c.secretData };
      ledger.converted('password_verifiers');
    } else if (type === 'otp') {
      const secret = str(parsed(c.secretData)?.value);
      const algorithm = OTP_ALGORITHMS[str(data?.algorithm) ?? 'HmacSHA1'];
      if (data?.subType !== 'totp' || !secret || !algorithm || totp) {
        ledger.dropped('totp_factors', sourceId, `OTP credential ${str(data?.subType) ?? 'unknown'}`);
        continue;
      }
      totp = compact({
        secret,
        encoding: 'raw',
        digits: typeof data.digits === 'number' ? data.digits : undefined,
        period: typeof data.period === 'number' ? data.period : undefined,
        algorithm,
      });
      ledger.converted('totp_factors');
    } else ledger.dropped('password_verifiers', sourceId, `credential type ${type ?? 'unknown'}`);
  }
  return { password, totp };
}

function organizationsOf(realm: Json, sourceSystem: string, ledger: Ledger) {
  const orgs: ConvertedOrganization[] = [];
  const membersOf = new Map<string, string[]>();
  for (const o of objects(realm.organizations)) {
    const id = str(o.id);
    if (!id) {
      ledger.dropped('organizations', '(no id)', 'an organization without an id');
      continue;
    }
    const externalId = `${sourceSystem}:organization:${id}`;
    orgs.push({
      externalId,
      kind: 'organization',
      sourceId: id,
      proposedSlug: slugOf(str(o.alias) ?? str(o.name) ?? id, id),
      displayName: (str(o.name) ?? str(o.alias) ?? id).slice(0, 200),
    });
    ledger.converted('organizations');
    for (const m of objects(o.members)) {
      for (const key of [str(m.id), str(m.username)?.toLowerCase(), str(m.email)?.toLowerCase()]) {
        if (!key) continue;
        const list = membersOf.get(key) ?? [];
        list.push(externalId);
        membersOf.set(key, list);
      }
    }
  }
  return { orgs, membersOf };
}

function convertUser(
  u: Json,
  ctx: { sourceSystem: string; keepAttributes: boolean; membersOf: Map<string, string[]> },
  ledger: Ledger,
): ConvertedUser | null {
  const sourceId = str(u.id);
  if (!sourceId) {
    ledger.dropped('users', '(no id)', 'a user without an id');
    return null;
  }
  const before = ledger.losses.length;
  const email = str(u.email);
  const username = usableUsername(str(u.username));
  if (!email && !username) {
    ledger.dropped('users', sourceId, 'neither an email nor a username this service accepts');
    return null;
  }
  const identifiers = [
    email && { type: 'email', value: email, verified: u.emailVerified === true, primary: true },
    username && { type: 'username', value: username },
  ].filter(Boolean);
  const { password, totp } = credentials(u, ledger, sourceId);
  const actions: string[] = [];
  for (const a of arr(u.requiredActions)) {
    const mapped = REQUIRED_ACTIONS[String(a)];
    if (mapped) {
      actions.push(mapped);
      ledger.converted('required_actions');
    } else ledger.dropped('required_actions', sourceId, `required action ${String(a)}`);
  }
  const roles = (Array.isArray(u.realmRoles) ? u.realmRoles : [])
    .map(String)
    .filter((r) => !BUILT_IN_ROLE.test(r))
    .map((r) => `realm-role:${r}`);
  const seen = new Set<string>();
  const memberships = [str(u.id), str(u.username)?.toLowerCase(), email?.toLowerCase()]
    .flatMap((k) => (k ? (ctx.membersOf.get(k) ?? []) : []))
    .filter((o) => !seen.has(o) && seen.add(o))
    .map((organizationExternalId) => ({
      organizationExternalId,
      sourceRoles: [KEYCLOAK_MEMBER_ROLE, ...roles],
    }));
  for (const g of Array.isArray(u.groups) ? u.groups : [])
    ledger.dropped('groups', sourceId, `group membership ${String(g)}`);
  const links = objects(u.federatedIdentities).flatMap((f) =>
    sourceLink(ledger, sourceId, str(f.identityProvider), str(f.userId), str(f.userName)),
  );
  const attributes = isObject(u.attributes) ? u.attributes : {};
  const first = str(u.firstName);
  const last = str(u.lastName);
  const record = compact({
    source_id: sourceId,
    identifiers,
    display_name: [first, last].filter(Boolean).join(' ').slice(0, 200) || undefined,
    given_name: first?.slice(0, 100),
    family_name: last?.slice(0, 100),
    state: u.enabled === false ? 'suspended' : 'active',
    required_actions: actions.length > 0 ? [...new Set(actions)] : undefined,
    password,
    totp,
    admin_metadata: carryAttributes(ledger, { ...ctx }, sourceId, attributes),
  });
  if (ledger.losses.length > before) ledger.lossy('users', sourceId, 'see the losses of this user');
  else ledger.converted('users');
  return { record, memberships, links, hasTotp: totp !== undefined };
}

export const keycloakAdapter: Adapter = {
  name: 'keycloak',
  product: 'Keycloak',
  major: '26',
  versionInExport: 'keycloakVersion',
  convert(inputs, options) {
    const ledger = new Ledger();
    const users: ConvertedUser[] = [];
    const organizations: ConvertedOrganization[] = [];
    const sourceRoles = new Map<string, number>();
    let version = '';
    inputs.forEach((realm, i) => {
      if (!isObject(realm) || !str(realm.realm))
        throw new AdapterError(`input[${i}]`, 'invalid', 'not a Keycloak realm export (no realm member)');
      version = checkVersion(keycloakAdapter, str(realm.keycloakVersion), options.sourceVersion);
      const { orgs, membersOf } = organizationsOf(realm, options.sourceSystem, ledger);
      organizations.push(...orgs);
      for (const g of objects(realm.groups))
        ledger.dropped('groups', str(g.id) ?? '?', 'groups are not carried');
      for (const c of objects(realm.clients))
        ledger.dropped('clients', str(c.clientId) ?? '?', 'clients are configured, not migrated');
      for (const u of objects(realm.users)) {
        const converted = convertUser(u, { ...options, membersOf }, ledger);
        if (!converted) continue;
        users.push(converted);
        countRoles(sourceRoles, converted);
      }
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
