// Account events bring the next push pass forward (docs/provisioning.md, Push): an outbox
// destination that, in the dispatch transaction, makes the realm's idle targets due now when an
// account was created, suspended, locked, reactivated, deleted or merged, or an organization's
// membership changed. The sweep then finds the change; profile and group changes, which have no
// event, wait for the next pass.
import type { OutboxDestination } from '../events/index.ts';

const NUDGING = /^(user\.(created|suspended|locked|reactivated|deleted|merged)|organization\.membership\.)/;

export const nudgeProvisioning: OutboxDestination = async (tx, events, now) => {
  const realms = [...new Set(events.filter((e) => NUDGING.test(e.type)).map((e) => e.realmId))];
  if (realms.length === 0) return;
  // Only targets between passes and not backing off: a pass under way finds the change itself.
  await tx.query(
    `update provisioning_targets set push_due_at = $2
      where realm_id = any($1::text[]) and state = 'active' and push_enabled and push_cursor is null
        and push_failures = 0 and push_due_at > $2`,
    [realms, now],
  );
};
