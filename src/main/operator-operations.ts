// The identity-cli commands that act on the deployment itself (maintenance, doctor, realm create,
// bootstrap; docs/cli.md, "Commands that open the database"), each as one operation with its
// input: identity-cli runs it on the database it opens, or, while `proudauth dev` holds the
// embedded database, asks that process to run it (operator-endpoints.ts). Both ways decode the same
// input and run the same code.
import { OPERATOR_ACTOR } from '../audit/audit.types.ts';
import {
  MAINTENANCE_MODES,
  presentMaintenance,
  readMaintenance,
  setMaintenance,
} from '../ops/maintenance.ts';
import { parseDuration } from '../platform/config/duration.ts';
import { decodeBody, enumOf, integer, object, optional, string } from '../platform/http/decode.ts';
import { RealmExistsError } from '../realms/index.ts';
import { BootstrapError, bootstrapAdministrator } from '../setup/bootstrap.service.ts';
import { createRealm, InvalidRealmNameError } from '../setup/realm.service.ts';
import { CliError } from './cli/cli-error.ts';
import { type AppContext, requireKeyring } from './context.ts';
import { define, type OperatorOperation } from './operator-define.ts';
import {
  restoreBegin,
  restoreMarkerStatus,
  restoreReconcile,
  revocationLogExport,
} from './restore-operations.ts';

export type { OperatorOperation } from './operator-define.ts';

/** Operator errors (an existing realm, a short password) become CliErrors, printed as they are. */
async function asOperatorError<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof RealmExistsError || e instanceof InvalidRealmNameError || e instanceof BootstrapError)
      throw new CliError(e.message);
    throw e;
  }
}

const MAX_DEBUG_MS = 24 * 3_600_000;
const noInput = object({});

export const maintenanceStatus = define('GET', '/operator/maintenance', noInput, async (ctx) =>
  presentMaintenance(await readMaintenance(ctx.db), ctx.clock.now()),
);

export const maintenanceSet = define(
  'PUT',
  '/operator/maintenance',
  object({
    mode: enumOf(MAINTENANCE_MODES),
    message: optional(string({ minLength: 1, maxLength: 500, pattern: /[^\p{Cc}]+/u })),
    retry_after_seconds: optional(integer({ min: 1, max: 86_400 })),
    debug_for: optional(string({ minLength: 1, maxLength: 32 })),
    debug_component: optional(string({ pattern: /[a-z][a-z0-9_.-]{0,63}/ })),
    by: optional(string({ minLength: 1, maxLength: 100, pattern: /[^\p{Cc}]+/u })),
  }),
  async (ctx, input) => {
    const debug = input.mode === 'debug';
    if ((input.debugFor !== undefined) !== debug)
      throw new CliError('--debug-for is given exactly with --mode debug');
    if (input.debugComponent !== undefined && !debug)
      throw new CliError('--debug-component is a lower-case name, with --mode debug');
    let debugMs: number | null = null;
    if (input.debugFor !== undefined) {
      try {
        debugMs = parseDuration(input.debugFor);
      } catch (e) {
        throw new CliError(`--debug-for: ${(e as Error).message}`);
      }
      if (debugMs <= 0 || debugMs > MAX_DEBUG_MS) throw new CliError('--debug-for is at most 24h');
    }
    const now = ctx.clock.now();
    const off = input.mode === 'off';
    const next = await setMaintenance(
      ctx.db,
      {
        mode: input.mode,
        message: off ? null : (input.message ?? null),
        retryAfterSeconds: off ? null : (input.retryAfterSeconds ?? null),
        debugUntil: debugMs === null ? null : new Date(now.getTime() + debugMs),
        debugComponent: input.debugComponent ?? null,
      },
      OPERATOR_ACTOR,
      input.by ?? 'identity-cli',
      now,
    );
    return presentMaintenance(next, now);
  },
);

/**
 * The key hierarchy as this process sees it: root and pepper versions with fingerprints, which
 * root versions the realms' signing keys (all but retired ones) are sealed under, and any such
 * version this process lacks. Used after each step of a root-key rotation (docs/keys.md).
 * Fingerprints only: the report can be pasted into a ticket without exposing a key.
 */
export async function doctorReport(ctx: AppContext) {
  const configured = new Set(ctx.keyring?.versions() ?? []);
  const used = await ctx.db.query<{ root_key_version: number; n: string }>(
    `select root_key_version, count(*) as n from signing_keys where state <> 'retired' group by root_key_version`,
  );
  const missing = used.rows.map((r) => Number(r.root_key_version)).filter((v) => !configured.has(v));
  return {
    ok: ctx.keyring !== null && missing.length === 0,
    key_provider: ctx.keyProvider,
    database: ctx.db.kind,
    root_keys: (ctx.keyring?.fingerprints() ?? []).map((f) => ({
      ...f,
      active: f.version === ctx.keyring?.activeVersion,
    })),
    pepper_keys: ctx.pepper
      .fingerprints()
      .map((f) => ({ ...f, active: f.version === ctx.pepper.activeVersion })),
    signing_keys_by_root_version: Object.fromEntries(
      used.rows.map((r) => [String(r.root_key_version), Number(r.n)]),
    ),
    missing_root_versions: missing,
  };
}

export const doctor = define('GET', '/operator/doctor', noInput, (ctx) => doctorReport(ctx));

export const realmCreate = define(
  'POST',
  '/operator/realms',
  object({ name: string({ minLength: 1, maxLength: 200 }), display_name: optional(string()) }),
  (ctx, input) =>
    asOperatorError(async () => {
      const realm = await createRealm(
        { db: ctx.db, keyring: requireKeyring(ctx), signingAlgorithm: ctx.config.keys.signingAlgorithm },
        { name: input.name, ...(input.displayName ? { displayName: input.displayName } : {}) },
        OPERATOR_ACTOR,
        ctx.clock.now(),
      );
      return {
        id: realm.id,
        name: realm.name,
        display_name: realm.display_name,
        issuer: `${ctx.config.server.publicOrigin}/realms/${realm.name}`,
      };
    }),
);

export const bootstrap = define(
  'POST',
  '/operator/bootstrap',
  object({
    realm: string({ minLength: 1, maxLength: 200 }),
    admin_email: string({ minLength: 1, maxLength: 320 }),
    password: string({ maxLength: 1024 }),
  }),
  (ctx, input) =>
    asOperatorError(async () => {
      const r = await bootstrapAdministrator(
        {
          db: ctx.db,
          keyring: requireKeyring(ctx),
          hasher: ctx.hasher,
          signingAlgorithm: ctx.config.keys.signingAlgorithm,
          clock: ctx.clock,
        },
        { realm: input.realm, email: input.adminEmail, password: input.password },
      );
      return {
        realm: r.realm.name,
        realm_id: r.realm.id,
        realm_created: r.realmCreated,
        user_id: r.userId,
        required_actions: ['configure_totp'],
        issuer: `${ctx.config.server.publicOrigin}/realms/${r.realm.name}`,
      };
    }),
);

export const OPERATOR_OPERATIONS: readonly OperatorOperation<never>[] = [
  maintenanceStatus,
  maintenanceSet,
  doctor,
  realmCreate,
  bootstrap,
  revocationLogExport,
  restoreMarkerStatus,
  restoreBegin,
  restoreReconcile,
] as OperatorOperation<never>[];

/** Decodes the input as the operation reads it; a refusal names the members. */
export function decodeOperatorInput<I>(op: OperatorOperation<I>, body: unknown): I {
  return decodeBody(op.decode, body ?? {});
}
