// notifications.new_sign_in (docs/policy.md): while the realm turns it on, a sign-in that starts a
// new session from a device the account has not used mails the account's email address through the
// delivery queue, in the completion's transaction. A device counts as used when a remembered device
// of the account was presented, or when a session of the account the service still keeps came from
// the same user agent; an account's first session mails nothing (docs/decisions.md). No address, no
// mail transport or no root key: no mail; the sign-in never depends on it.
import { emailConfigured, enqueueNotification, localeOf } from '../notifications/index.ts';
import { one, type Tx } from '../platform/db/db.ts';
import { brandNameOf, policyValue, type RealmPolicy, type RealmRow } from '../realms/index.ts';
import type { Facts } from './next-actions.types.ts';
import type { SigninDeps } from './signin.deps.ts';
import type { SigninTx } from './transaction.ts';

/** The user agent as the mail shows it: printable characters, at most 120 of them. */
const deviceLabel = (ua: string | null): string => {
  const clean = (ua ?? '').replace(/[^\x20-\x7e]/g, '').trim();
  return clean === '' ? 'unknown' : clean.slice(0, 120);
};

export async function noticeNewSignIn(
  app: Pick<SigninDeps, 'config' | 'keyring'>,
  q: Tx,
  realm: RealmRow,
  policy: RealmPolicy,
  facts: Facts,
  t: SigninTx,
  sessionId: string,
  now: Date,
): Promise<void> {
  if (policyValue(policy, 'notifications', 'new_sign_in') !== true) return;
  const to = facts.user?.email ?? null;
  if (!t.userId || !to || facts.rememberedDevice === true) return;
  if (!app.keyring || !emailConfigured(app.config.delivery)) return;
  const seen = await one<{ earlier: boolean; same: boolean }>(
    q,
    `select exists (select 1 from sessions where realm_id = $1 and user_id = $2 and id <> $3) as earlier,
            exists (select 1 from sessions where realm_id = $1 and user_id = $2 and id <> $3
                      and user_agent is not distinct from $4) as same`,
    [realm.id, t.userId, sessionId, t.userAgent],
  );
  if (!seen.earlier || seen.same) return;
  await enqueueNotification(
    q,
    app.keyring,
    {
      realmId: realm.id,
      channel: 'email',
      template: 'new_sign_in',
      locale: localeOf(t.uiLocales),
      to,
      vars: {
        realm: brandNameOf(realm, policy),
        device: deviceLabel(t.userAgent),
        time: now.toISOString().slice(0, 16).replace('T', ' '),
      },
    },
    now,
  );
}
