// SuperTokens core 12 into user-import records (spec doc 2, "Migration adapters";
// docs/migration.md, SuperTokens). Two inputs: the database-derived export (`{core_version,
// users}`, each user in the shape of the core's bulk-import user: loginMethods with passwordHash
// and hashingAlgorithm, totpDevices, userRoles, userMetadata), and the core API user list
// (`GET /users`, which carries no password hashes) with --source-version. Tenants other than
// `public` become organizations; user roles become source role keys for the mapping.
import {
  type Adapter,
  AdapterError,
  arr,
  type ConversionOptions,
  type ConvertedOrganization,
  type ConvertedUser,
  carryAttributes,
  checkVersion,
  compact,
  countRoles,
  type FirebaseHashParameters,
  isObject,
  type Json,
  Ledger,
  objects,
  type SourceLink,
  slugOf,
  sourceLink,
  str,
} from './adapter.ts';

export const SUPERTOKENS_MEMBER_ROLE = 'tenant:member';

function passwordOf(method: Json, ledger: Ledger, sourceId: string): Json | undefined {
  const hash = str(method.passwordHash);
  if (!hash) return undefined;
  const algorithm = (str(method.hashingAlgorithm) ?? '').toLowerCase();
  if (/^\$2[aby]\$/.test(hash) && (algorithm === '' || algorithm === 'bcrypt')) {
    ledger.converted('password_verifiers');
    return { format: 'bcrypt', hash };
  }
  if (/^\$argon2(id|i)\$/.test(hash) && (algorithm === '' || algorithm === 'argon2')) {
    ledger.converted('password_verifiers');
    return { format: 'phc', hash };
  }
  if (algorithm === 'firebase_scrypt' || hash.startsWith('$f_scrypt$')) {
    const firebase = firebaseHash(hash);
    if (firebase) {
      // Counted as converted here; buildDocuments leaves it behind without the signer key.
      ledger.converted('password_verifiers');
      return firebase;
    }
    ledger.dropped('password_verifiers', sourceId, 'a Firebase scrypt hash not in the $f_scrypt$ form');
    return undefined;
  }
  ledger.dropped(
    'password_verifiers',
    sourceId,
    `password hash scheme ${algorithm || hash.split('$')[1] || 'unknown'}`,
  );
  return undefined;
}

/**
 * The core's Firebase form `$f_scrypt$<hash>$<salt>$m=<memory cost>$r=<rounds>$s=<salt separator>`
 * (base64 never contains `$`): the verifier and the parameters the hash states.
 */
function firebaseHash(v: string): (Json & { firebase: FirebaseHashParameters }) | undefined {
  const [, scheme, hash, salt, ...rest] = v.split('$');
  const params = new Map(rest.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]));
  const rounds = Number(params.get('r'));
  const memoryCost = Number(params.get('m'));
  const saltSeparator = params.get('s');
  if (scheme !== 'f_scrypt' || !hash || !salt || saltSeparator === undefined) return undefined;
  if (!Number.isInteger(rounds) || !Number.isInteger(memoryCost)) return undefined;
  return { format: 'firebase_scrypt', hash, salt, firebase: { saltSeparator, rounds, memoryCost } };
}

interface Ctx extends ConversionOptions {
  tenants: Map<string, ConvertedOrganization>;
}

function tenantOrg(ctx: Ctx, tenantId: string, ledger: Ledger): string | null {
  if (tenantId === 'public') return null;
  const known = ctx.tenants.get(tenantId);
  if (known) return known.externalId;
  const org = {
    externalId: `${ctx.sourceSystem}:tenant:${tenantId}`,
    kind: 'tenant',
    sourceId: tenantId,
    proposedSlug: slugOf(tenantId, tenantId),
    displayName: tenantId.slice(0, 200),
  };
  ctx.tenants.set(tenantId, org);
  ledger.converted('organizations');
  return org.externalId;
}

function convertUser(raw: Json, ctx: Ctx, ledger: Ledger, withHashes: boolean): ConvertedUser | null {
  const u = isObject(raw.user) ? raw.user : raw;
  const sourceId = str(u.id) ?? str(u.externalUserId);
  if (!sourceId) {
    ledger.dropped('users', '(no id)', 'a user without an id');
    return null;
  }
  const before = ledger.losses.length;
  const methods = objects(u.loginMethods);
  const primary = methods.find((m) => m.isPrimary === true) ?? methods[0] ?? {};
  const emailMethod = methods.find((m) => str(m.email)) ?? {};
  const phoneMethod = methods.find((m) => str(m.phoneNumber)) ?? {};
  const identifiers = [
    str(emailMethod.email) && {
      type: 'email',
      value: emailMethod.email,
      verified: emailMethod.isVerified === true || emailMethod.verified === true,
      primary: true,
    },
    str(phoneMethod.phoneNumber) && {
      type: 'phone',
      value: phoneMethod.phoneNumber,
      verified: phoneMethod.isVerified === true || phoneMethod.verified === true,
    },
  ].filter(Boolean);
  if (identifiers.length === 0) {
    ledger.dropped('users', sourceId, 'neither an email nor a phone number');
    return null;
  }
  let password: Json | undefined;
  const links: SourceLink[] = [];
  for (const m of methods) {
    const recipe = str(m.recipeId);
    if (recipe === 'emailpassword') password ??= passwordOf(m, ledger, sourceId);
    else if (recipe === 'thirdparty') {
      // The bulk-import shape has thirdPartyId and thirdPartyUserId; the core API's {thirdParty: {id, userId}}.
      const third = isObject(m.thirdParty) ? m.thirdParty : {};
      links.push(
        ...sourceLink(
          ledger,
          sourceId,
          str(m.thirdPartyId) ?? str(third.id),
          str(m.thirdPartyUserId) ?? str(third.userId),
          str(m.email),
        ),
      );
    }
  }
  const actions: string[] = [];
  if (!withHashes && methods.some((m) => str(m.recipeId) === 'emailpassword')) {
    ledger.dropped('password_verifiers', sourceId, 'the core API user list carries no password hashes');
    actions.push('update_password');
  }
  const devices = objects(u.totpDevices);
  const device = devices.find((d) => str(d.secretKey));
  if (device) ledger.converted('totp_factors');
  for (const extra of devices.slice(1))
    ledger.dropped('totp_factors', sourceId, `a second TOTP device ${str(extra.deviceName) ?? ''}`.trim());
  const roles = arr(u.userRoles)
    .map((r) => (isObject(r) ? str(r.role) : str(r)))
    .filter((r): r is string => !!r);
  const tenantIds = new Set<string>(
    [...arr(u.tenantIds), ...methods.flatMap((m) => arr(m.tenantIds))].map(String),
  );
  const memberships = [...tenantIds]
    .map((t) => tenantOrg(ctx, t, ledger))
    .filter((o): o is string => o !== null)
    .map((organizationExternalId) => ({
      organizationExternalId,
      sourceRoles: [SUPERTOKENS_MEMBER_ROLE, ...roles.map((r) => `role:${r}`)],
    }));
  const metadata = isObject(u.userMetadata) ? u.userMetadata : {};
  const { firebase, ...verifier } = password ?? {};
  const record = compact({
    source_id: sourceId,
    identifiers,
    required_actions: actions.length > 0 ? actions : undefined,
    password: password ? verifier : undefined,
    totp: device
      ? compact({
          secret: device.secretKey,
          encoding: 'base32',
          period: typeof device.period === 'number' ? device.period : undefined,
        })
      : undefined,
    admin_metadata: carryAttributes(ledger, ctx, sourceId, metadata),
    audit_events:
      typeof primary.timeJoinedInMSSinceEpoch === 'number'
        ? [
            {
              event_type: 'SIGN_UP',
              occurred_at: new Date(primary.timeJoinedInMSSinceEpoch).toISOString(),
              outcome: 'success',
            },
          ]
        : undefined,
  });
  if (ledger.losses.length > before) ledger.lossy('users', sourceId, 'see the losses of this user');
  else ledger.converted('users');
  return {
    record,
    memberships,
    links,
    hasTotp: device !== undefined,
    ...(firebase ? { firebase: firebase as FirebaseHashParameters } : {}),
  };
}

export const supertokensAdapter: Adapter = {
  name: 'supertokens',
  product: 'SuperTokens core',
  major: '12',
  versionInExport: 'core_version (the core API user list: --source-version)',
  convert(inputs, options) {
    const ledger = new Ledger();
    const ctx: Ctx = { ...options, tenants: new Map() };
    const users: ConvertedUser[] = [];
    const sourceRoles = new Map<string, number>();
    let version = '';
    inputs.forEach((input, n) => {
      if (!isObject(input) || !Array.isArray(input.users))
        throw new AdapterError(`input[${n}]`, 'invalid', 'not a SuperTokens export (no users member)');
      // The core API's answer says status OK and has no version; the database export states one.
      const apiList = input.status === 'OK';
      version = checkVersion(
        supertokensAdapter,
        apiList ? undefined : str(input.core_version),
        options.sourceVersion,
      );
      for (const raw of objects(input.users)) {
        const converted = convertUser(raw, ctx, ledger, !apiList);
        if (!converted) continue;
        users.push(converted);
        countRoles(sourceRoles, converted);
      }
    });
    return {
      sourceVersion: version,
      users,
      organizations: [...ctx.tenants.values()],
      sourceRoles,
      tally: ledger.tally,
      losses: ledger.losses,
    };
  },
};
