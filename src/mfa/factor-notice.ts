// notifications.factor_changed (docs/policy.md): while the realm turns it on, a factor added to or
// removed from an account mails the account's email address through the delivery queue, in the
// transaction of the change. No address, no mail transport or no root key: no mail; the change
// itself never depends on it.
import { emailConfigured, enqueueNotification, type Locale, localeOf } from '../notifications/index.ts';
import type { Config } from '../platform/config/settings.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Tx } from '../platform/db/db.ts';
import { brandNameOf, policyValue, type RealmPolicy, type RealmRow } from '../realms/index.ts';

export interface FactorNoticeDeps {
  config: Pick<Config, 'delivery'>;
  keyring: RootKeyring | null;
}

export interface FactorChange {
  factor: 'totp' | 'hotp' | 'webauthn';
  change: 'added' | 'removed';
  /** The account's email address, if it has one. */
  to: string | null;
  locale: Locale;
}

export async function noticeFactorChanged(
  q: Tx,
  deps: FactorNoticeDeps,
  realm: RealmRow,
  policy: RealmPolicy,
  c: FactorChange,
  now: Date,
): Promise<void> {
  if (policyValue(policy, 'notifications', 'factor_changed') !== true) return;
  if (!c.to || !deps.keyring || !emailConfigured(deps.config.delivery)) return;
  await enqueueNotification(
    q,
    deps.keyring,
    {
      realmId: realm.id,
      channel: 'email',
      template: 'factor_changed',
      locale: c.locale,
      to: c.to,
      vars: { realm: brandNameOf(realm, policy), factor: c.factor, change: c.change },
    },
    now,
  );
}

/** The mail's language from an Accept-Language header: its first tag we have templates for. */
export const requestLocale = (acceptLanguage: string | string[] | undefined): Locale =>
  localeOf(String(acceptLanguage ?? '').replace(/[,;]/g, ' '));
