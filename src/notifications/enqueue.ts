// Queuing a notification inside the caller's transaction: it commits with the change that caused
// it or not at all. The rendered message is sealed under the root key (purpose mail-secret), so
// codes and links waiting in the queue are not readable from the database.
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import type { MailMessage, SmsMessage } from './mailer.ts';
import { insertNotification } from './notifications.repo.ts';
import { type Locale, render, type TemplateName, type TemplateVars } from './templates.ts';

export const payloadAad = (realmId: string, id: string) => `notification/${realmId}/${id}`;

export interface NotificationRequest {
  realmId: string;
  channel: 'email' | 'sms';
  template: TemplateName;
  locale: Locale;
  to: string;
  vars: TemplateVars;
  organizationId?: string | null;
}

export async function enqueueNotification(
  tx: Tx,
  keyring: RootKeyring,
  n: NotificationRequest,
  now: Date,
): Promise<string> {
  const id = newId('ntf', now.getTime());
  const r = render(n.template, n.locale, n.vars);
  const hint = n.vars.link ?? n.vars.code;
  const message: MailMessage | SmsMessage =
    n.channel === 'email'
      ? { to: n.to, subject: r.subject, text: r.text, html: r.html, ...(hint ? { hint } : {}) }
      : { to: n.to, text: r.text.split('\n\n-- ')[0] ?? r.text, ...(hint ? { hint } : {}) };
  const sealed = keyring.encrypt('mail-secret', JSON.stringify(message), payloadAad(n.realmId, id));
  await insertNotification(
    tx,
    {
      realmId: n.realmId,
      id,
      channel: n.channel,
      template: n.template,
      organizationId: n.organizationId ?? null,
      sealed,
    },
    now,
  );
  return id;
}
