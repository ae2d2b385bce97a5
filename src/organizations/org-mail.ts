// Mail to a member about an organization (an invitation, a join-request decision), queued in the
// transaction of the change. Accounts without an email address, and deployments without a mail
// transport, get none; the change itself never depends on it.
import { enqueueNotification, type TemplateName, type TemplateVars } from '../notifications/index.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Tx } from '../platform/db/db.ts';
import { primaryEmail } from '../users/index.ts';

export interface OrgMail {
  keyring: RootKeyring;
  /** The realm's display name, shown in the message. */
  realm: string;
}

export async function mailMember(
  tx: Tx,
  mail: OrgMail | undefined,
  realmId: string,
  orgId: string,
  userId: string,
  template: TemplateName,
  vars: Omit<TemplateVars, 'realm'>,
  now: Date,
): Promise<void> {
  if (!mail) return;
  const to = await primaryEmail(tx, realmId, userId);
  if (!to) return;
  await enqueueNotification(
    tx,
    mail.keyring,
    {
      realmId,
      channel: 'email',
      template,
      locale: 'en',
      to,
      vars: { realm: mail.realm, ...vars },
      organizationId: orgId,
    },
    now,
  );
}
