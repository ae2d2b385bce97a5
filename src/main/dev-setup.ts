// What `proudauth dev` does on a developer's first start: a root key file in the data directory
// (never in the database) and realm `main` with a first administrator whose password is shown once.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { OPERATOR_ACTOR } from '../audit/audit.types.ts';
import { systemCall } from '../kernel/call.ts';
import { generateRootKey } from '../platform/crypto/keyring.ts';
import { changePolicy, findRealmByName, policyRulesOf } from '../realms/index.ts';
import { bootstrapAdministrator } from '../setup/bootstrap.service.ts';
import { countUsers } from '../users/index.ts';
import { type AppContext, requireKeyring } from './context.ts';

export const DEV_REALM = 'main';
export const DEV_ADMIN_EMAIL = 'admin@example.com';

/** Overrides pointing keys.root at a generated key file, when no root key is configured. */
export function devRootKeyOverrides(dataDir: string): Record<string, unknown> {
  const dir = resolve(dataDir);
  const file = join(dir, 'root-key-1');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${generateRootKey()}\n`, { mode: 0o600, flag: 'wx' });
  }
  readFileSync(file); // fail early and clearly when it is unreadable
  return { 'keys.root.1': `file:${file}`, 'keys.active_version': 1 };
}

export interface DevAdmin {
  email: string;
  password: string;
}

/** Creates realm main and its first administrator unless the realm already has accounts. */
export async function ensureDevRealm(ctx: AppContext): Promise<DevAdmin | null> {
  const realm = await findRealmByName(ctx.db, DEV_REALM);
  if (realm && (await countUsers(ctx.db, realm.id)) > 0) return null;
  const password = randomBytes(18).toString('base64url');
  await bootstrapAdministrator(
    {
      db: ctx.db,
      keyring: requireKeyring(ctx),
      hasher: ctx.hasher,
      signingAlgorithm: ctx.config.keys.signingAlgorithm,
      clock: ctx.clock,
    },
    { realm: DEV_REALM, email: DEV_ADMIN_EMAIL, password },
  );
  // A developer's realm: anyone registers (with a mailed confirmation code) and signs in with a
  // password, an emailed code or a magic link; the codes and links land in the dev mail folder.
  const created = await findRealmByName(ctx.db, DEV_REALM);
  if (created) {
    await changePolicy(
      ctx.db,
      systemCall(created.id, ctx.clock.now(), OPERATOR_ACTOR),
      {
        patch: {
          registration: { mode: 'open', require_email_verification: true },
          login: { password: true, email_otp: true, magic_link: true, identifiers: ['email', 'username'] },
        },
        reason: 'proudauth dev: open registration and emailed codes',
      },
      policyRulesOf(ctx.config),
    );
  }
  return { email: DEV_ADMIN_EMAIL, password };
}
