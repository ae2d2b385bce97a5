// Use cases of synchronous hooks (docs/hooks.md): create, read, change, delete and rotate the
// secret. Each change writes its row and its audit record in one transaction; the URL is checked
// (resolved through the egress guard) before that transaction opens, as webhook destinations are.
import { inChange, type Recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { cutPage, type Page } from '../platform/http/keyset.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import type { Resolver } from '../platform/net/outbound-http.ts';
import { ifMatchSatisfied } from '../roles/index.ts';
import { assertDestination, type DeliveryPolicy, newWebhookSecret } from '../webhooks/index.ts';
import type { HookInput, HookPatch } from './hooks.decode.ts';
import {
  deleteHook,
  findHook,
  forceHookState,
  type HookChanges,
  type HookRow,
  type HookState,
  insertHook,
  listHooks,
  lockRealmHooks,
  pluginHooks,
  refreshRealmHookKinds,
  rotateHookSecret,
  updateHook,
} from './hooks.repo.ts';

/** A rotated secret keeps signing beside the new one this long, as a webhook's does. */
const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

export interface HookAdminDeps {
  db: Db;
  keyring: RootKeyring | null;
  resolver: Resolver;
  policy: DeliveryPolicy;
  /** This process's realm rows, which carry hook_kinds: forgotten after every change. */
  realms?: { forget(name?: string): void };
}

/**
 * One change of a realm's hooks: the realm row locked first, its hook_kinds recomputed last, in
 * the change's transaction; this process then reads the realm again.
 */
async function inHookChange<T>(
  deps: HookAdminDeps,
  call: Call,
  work: (tx: Tx, record: Recorder) => Promise<T>,
): Promise<T> {
  const out = await inChange(deps.db, call, async (tx, record) => {
    await lockRealmHooks(tx, call.realmId);
    const result = await work(tx, record);
    await refreshRealmHookKinds(tx, call.realmId);
    return result;
  });
  deps.realms?.forget();
  return out;
}

/** The row binding of a sealed secret: a secret moved to another row does not open. */
export const hookSecretAad = (realmId: string, id: string) => `hook/${realmId}/${id}`;

function keyringOf(deps: HookAdminDeps): RootKeyring {
  if (!deps.keyring) throw problem.unavailable('no root key is configured to seal hook secrets');
  return deps.keyring;
}

async function requireHook(db: Db | Tx, realmId: string, id: string): Promise<HookRow> {
  const row = id.includes('\0') ? null : await findHook(db, realmId, id);
  if (!row) throw problem.notFound('no such hook');
  return row;
}

/** A hook a plugin manages changes only through its plugin (docs/plugins.md). */
function refuseIfPluginManaged(row: HookRow): void {
  if (row.plugin_id) throw problem.conflict('this hook is managed by a plugin and cannot be changed here');
}

/** The URL rules of webhook destinations, on the hook's `url` field. */
export const validateHookUrl = (deps: HookAdminDeps, h: Pick<HookChanges, 'url' | 'allowPrivateNetwork'>) =>
  assertDestination(deps, h.url, h.allowPrivateNetwork, 'url');

/** Creates a hook inside a change already open; the caller has checked its URL (validateHookUrl). */
export async function createHookInTx(
  tx: Tx,
  record: Recorder,
  call: Call,
  keyring: RootKeyring,
  input: HookInput,
  pluginId: string | null,
): Promise<{ row: HookRow; secret: string }> {
  await lockRealmHooks(tx, call.realmId);
  const id = newId('hok', call.now.getTime());
  const secret = newWebhookSecret();
  const row = await insertHook(
    tx,
    call.realmId,
    {
      ...input,
      id,
      ownerUserId: call.actor.type === 'user' ? call.actor.id : null,
      secretSealed: keyring.encrypt('hook-secret', secret, hookSecretAad(call.realmId, id)),
      pluginId,
    },
    call.now,
  );
  await record.audit('hook.created', {
    category: 'configuration',
    target: { type: 'hook', id },
    data: {
      kind: input.kind,
      failure_mode: input.failureMode,
      allow_private_network: input.allowPrivateNetwork,
      ...(pluginId ? { plugin_id: pluginId } : {}),
    },
  });
  await refreshRealmHookKinds(tx, call.realmId);
  return { row, secret };
}

/** Deletes the hooks a plugin manages inside a change already open; answers how many. */
export async function removePluginHooksInTx(
  tx: Tx,
  record: Recorder,
  call: Call,
  pluginId: string,
): Promise<number> {
  await lockRealmHooks(tx, call.realmId);
  const rows = await pluginHooks(tx, call.realmId, pluginId);
  for (const row of rows) {
    await deleteHook(tx, call.realmId, row.id);
    await record.audit('hook.deleted', {
      category: 'configuration',
      target: { type: 'hook', id: row.id },
      data: { plugin_id: pluginId },
    });
  }
  await refreshRealmHookKinds(tx, call.realmId);
  return rows.length;
}

export async function createHook(
  deps: HookAdminDeps,
  call: Call,
  input: HookInput,
): Promise<{ row: HookRow; secret: string }> {
  const keyring = keyringOf(deps);
  await validateHookUrl(deps, input);
  return inHookChange(deps, call, (tx, record) => createHookInTx(tx, record, call, keyring, input, null));
}

export const getHook = (deps: HookAdminDeps, realmId: string, id: string) =>
  requireHook(deps.db, realmId, id);

/** One page of the realm's hooks by id, after the cursor's id. */
export const listHookPage = async (
  deps: HookAdminDeps,
  page: { realmId: string; after: string | null; limit: number },
): Promise<Page<HookRow>> =>
  cutPage(await listHooks(deps.db, page.realmId, page.after, page.limit + 1), page.limit);

export async function patchHook(
  deps: HookAdminDeps,
  call: Call,
  id: string,
  patch: HookPatch,
  ifMatch: string | undefined,
): Promise<HookRow> {
  const before = await requireHook(deps.db, call.realmId, id);
  refuseIfPluginManaged(before);
  if (!ifMatchSatisfied(ifMatch, before.version)) throw problem.preconditionFailed();
  const next: HookChanges = {
    name: patch.name ?? before.name,
    url: patch.url ?? before.url,
    timeoutMs: patch.timeoutMs ?? before.timeout_ms,
    failureMode: patch.failureMode ?? before.failure_mode,
    clientIds: patch.clientIds ?? before.client_ids,
    allowPrivateNetwork: patch.allowPrivateNetwork ?? before.allow_private_network,
    state: patch.state ?? before.state,
  };
  if (patch.url !== undefined || patch.allowPrivateNetwork !== undefined) await validateHookUrl(deps, next);
  return inHookChange(deps, call, async (tx, record) => {
    const row = await updateHook(tx, call.realmId, id, before.version, next, call.now);
    if (!row) {
      await requireHook(deps.db, call.realmId, id);
      throw problem.preconditionFailed('the hook changed while this update was checked');
    }
    await record.audit('hook.updated', {
      category: 'configuration',
      target: { type: 'hook', id },
      data: { changed: Object.keys(patch).sort(), state: row.state },
    });
    return row;
  });
}

export async function removeHook(
  deps: HookAdminDeps,
  call: Call,
  id: string,
  ifMatch: string | undefined,
): Promise<void> {
  await inHookChange(deps, call, async (tx, record) => {
    const row = id.includes('\0') ? null : await findHook(tx, call.realmId, id, { forUpdate: true });
    if (!row) throw problem.notFound('no such hook');
    refuseIfPluginManaged(row);
    if (!ifMatchSatisfied(ifMatch, row.version)) throw problem.preconditionFailed();
    await deleteHook(tx, call.realmId, id);
    await record.audit('hook.deleted', { category: 'configuration', target: { type: 'hook', id } });
  });
}

export async function rotateHookSecretOf(
  deps: HookAdminDeps,
  call: Call,
  id: string,
): Promise<{ row: HookRow; secret: string }> {
  const keyring = keyringOf(deps);
  const secret = newWebhookSecret();
  return inHookChange(deps, call, async (tx, record) => {
    const before = id.includes('\0') ? null : await findHook(tx, call.realmId, id, { forUpdate: true });
    if (!before) throw problem.notFound('no such hook');
    refuseIfPluginManaged(before);
    const sealed = keyring.encrypt('hook-secret', secret, hookSecretAad(call.realmId, id));
    const until = new Date(call.now.getTime() + ROTATION_OVERLAP_MS);
    const row = await rotateHookSecret(tx, call.realmId, id, sealed, before.secret_sealed, until, call.now);
    if (!row) throw problem.notFound('no such hook');
    await record.audit('hook.secret_rotated', { category: 'configuration', target: { type: 'hook', id } });
    return { row, secret };
  });
}

/**
 * Sets a hook's state inside a change already open (an emergency control), without If-Match.
 * A disabled hook is called by nothing. Answers the state before.
 */
export async function setHookStateInTx(
  tx: Tx,
  record: Recorder,
  call: Call,
  id: string,
  state: HookState,
): Promise<HookState> {
  await lockRealmHooks(tx, call.realmId);
  const before = id.includes('\0') ? null : await forceHookState(tx, call.realmId, id, state, call.now);
  if (!before) throw problem.notFound('no such hook');
  await refreshRealmHookKinds(tx, call.realmId);
  if (before !== state)
    await record.audit('hook.updated', {
      category: 'configuration',
      target: { type: 'hook', id },
      data: { changed: ['state'], state },
    });
  return before;
}
