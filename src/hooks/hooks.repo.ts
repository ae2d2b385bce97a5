// SQL of synchronous hooks (migrations/0055_hooks.sql, 0062_workflow_step_hooks.sql). Every statement filters on the realm.
import type { Queryable } from '../platform/db/db.ts';

export const HOOK_KINDS = [
  'before_registration',
  'before_token_issuance',
  'after_sign_in',
  'workflow_step',
] as const;
export type HookKind = (typeof HOOK_KINDS)[number];
export const FAILURE_MODES = ['fail_open', 'fail_closed'] as const;
export type FailureMode = (typeof FAILURE_MODES)[number];
export const HOOK_STATES = ['active', 'disabled'] as const;
export type HookState = (typeof HOOK_STATES)[number];

export interface HookRow {
  realm_id: string;
  id: string;
  name: string;
  kind: HookKind;
  url: string;
  timeout_ms: number;
  failure_mode: FailureMode;
  client_ids: string[];
  allow_private_network: boolean;
  state: HookState;
  owner_user_id: string | null;
  /** The plugin that manages it (docs/plugins.md); such a hook changes only with its plugin. */
  plugin_id: string | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** What a create or a change writes; kind is fixed at creation. */
export interface HookChanges {
  name: string;
  url: string;
  timeoutMs: number;
  failureMode: FailureMode;
  clientIds: string[];
  allowPrivateNetwork: boolean;
  state: HookState;
}

export interface NewHook extends HookChanges {
  id: string;
  kind: HookKind;
  ownerUserId: string | null;
  secretSealed: string;
  pluginId?: string | null;
}

export async function insertHook(q: Queryable, realmId: string, h: NewHook, now: Date): Promise<HookRow> {
  const r = await q.query<HookRow>(
    `insert into hooks (realm_id, id, name, kind, url, timeout_ms, failure_mode, client_ids,
       allow_private_network, state, owner_user_id, secret_sealed, created_at, updated_at, plugin_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $14) returning *`,
    [
      realmId,
      h.id,
      h.name,
      h.kind,
      h.url,
      h.timeoutMs,
      h.failureMode,
      h.clientIds,
      h.allowPrivateNetwork,
      h.state,
      h.ownerUserId,
      h.secretSealed,
      now,
      h.pluginId ?? null,
    ],
  );
  return r.rows[0]!;
}

export async function findHook(
  q: Queryable,
  realmId: string,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<HookRow | null> {
  const r = await q.query<HookRow>(
    `select * from hooks where realm_id = $1 and id = $2${opts.forUpdate ? ' for update' : ''}`,
    [realmId, id],
  );
  return r.rows[0] ?? null;
}

export async function listHooks(
  q: Queryable,
  realmId: string,
  after: string | null,
  limit: number,
): Promise<HookRow[]> {
  const r = await q.query<HookRow>(
    `select * from hooks where realm_id = $1 and ($2::text is null or id > $2) order by id limit $3`,
    [realmId, after, limit],
  );
  return r.rows;
}

/** The hooks a plugin manages, by id. */
export async function pluginHooks(q: Queryable, realmId: string, pluginId: string): Promise<HookRow[]> {
  const r = await q.query<HookRow>(
    'select * from hooks where realm_id = $1 and plugin_id = $2 order by id for update',
    [realmId, pluginId],
  );
  return r.rows;
}

/** The active hooks of a kind that apply to a client (an empty client list applies to all). */
export async function activeHooksFor(
  q: Queryable,
  realmId: string,
  kind: HookKind,
  clientId: string | null,
): Promise<HookRow[]> {
  const r = await q.query<HookRow>(
    `select * from hooks where realm_id = $1 and kind = $2 and state = 'active'
        and (cardinality(client_ids) = 0 or $3::text = any (client_ids))
      order by id`,
    [realmId, kind, clientId],
  );
  return r.rows;
}

export async function updateHook(
  q: Queryable,
  realmId: string,
  id: string,
  version: number,
  c: HookChanges,
  now: Date,
): Promise<HookRow | null> {
  const r = await q.query<HookRow>(
    `update hooks set name = $4, url = $5, timeout_ms = $6, failure_mode = $7, client_ids = $8,
            allow_private_network = $9, state = $10, version = version + 1, updated_at = $11
      where realm_id = $1 and id = $2 and version = $3 returning *`,
    [
      realmId,
      id,
      version,
      c.name,
      c.url,
      c.timeoutMs,
      c.failureMode,
      c.clientIds,
      c.allowPrivateNetwork,
      c.state,
      now,
    ],
  );
  return r.rows[0] ?? null;
}

export async function rotateHookSecret(
  q: Queryable,
  realmId: string,
  id: string,
  sealed: string,
  previous: string,
  previousUntil: Date,
  now: Date,
): Promise<HookRow | null> {
  const r = await q.query<HookRow>(
    `update hooks set secret_sealed = $3, previous_secret_sealed = $4, previous_secret_expires_at = $5,
            version = version + 1, updated_at = $6
      where realm_id = $1 and id = $2 returning *`,
    [realmId, id, sealed, previous, previousUntil, now],
  );
  return r.rows[0] ?? null;
}

export async function deleteHook(q: Queryable, realmId: string, id: string): Promise<boolean> {
  const r = await q.query('delete from hooks where realm_id = $1 and id = $2', [realmId, id]);
  return (r.rowCount ?? 0) > 0;
}

/** Sets the state without a version check (an emergency control); answers the state before. */
export async function forceHookState(
  q: Queryable,
  realmId: string,
  id: string,
  state: HookState,
  now: Date,
): Promise<HookState | null> {
  const before = await findHook(q, realmId, id, { forUpdate: true });
  if (!before) return null;
  if (before.state !== state)
    await q.query(
      `update hooks set state = $3, version = version + 1, updated_at = $4 where realm_id = $1 and id = $2`,
      [realmId, id, state, now],
    );
  return before.state;
}

/** Taken first by every change of a realm's hooks, so that their kinds are recomputed in order. */
export async function lockRealmHooks(q: Queryable, realmId: string): Promise<void> {
  await q.query('select 1 from realms where id = $1 for update', [realmId]);
}

/** realms.hook_kinds again from the realm's active hooks (after lockRealmHooks). */
export async function refreshRealmHookKinds(q: Queryable, realmId: string): Promise<void> {
  await q.query(
    `update realms set hook_kinds = coalesce(
       (select array_agg(distinct kind order by kind) from hooks where realm_id = $1 and state = 'active'), '{}')
      where id = $1`,
    [realmId],
  );
}
