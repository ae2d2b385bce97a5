// Use cases of plugins (docs/plugins.md): upload a version, approve it under the realm policy's
// extensions.plugin_review (document 1, realm policy), install or upgrade it, and uninstall. An
// installation creates every hook, webhook subscription and workflow of the payload, with the
// plugin's id, in one transaction with their audit records; an upgrade and an uninstallation
// replace or remove them the same way. Destinations are checked before that transaction opens.
import { inChange, type Recorder } from '../audit/index.ts';
import {
  createHookInTx,
  type HookAdminDeps,
  removePluginHooksInTx,
  validateHookUrl,
} from '../hooks/index.ts';
import type { Call } from '../kernel/call.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { cutPage, type Page } from '../platform/http/keyset.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import { currentPolicy, policyValue } from '../realms/index.ts';
import { callerAuthority, REALM_CONTEXT } from '../roles/delegation.ts';
import type { Delegator } from '../roles/delegator.ts';
import {
  createSubscriptionInTx,
  removePluginSubscriptionsInTx,
  validateSubscriptionDestination,
  type WebhookDeps,
} from '../webhooks/index.ts';
import { createWorkflowInTx, removePluginWorkflowsInTx } from '../workflows/workflows.service.ts';
import { decodeParts, type PluginPackage } from './plugins.decode.ts';
import {
  approveVersion,
  findPlugin,
  findPluginByName,
  findVersion,
  insertPlugin,
  insertVersion,
  installedAmong,
  installedDependents,
  listPlugins,
  type PluginRow,
  setInstalled,
  type VersionRow,
  versionExists,
  versionsOf,
} from './plugins.repo.ts';

export interface PluginDeps {
  db: Db;
  hookAdmin: HookAdminDeps;
  webhooks: WebhookDeps;
}

const target = (id: string) => ({ type: 'plugin', id });
const actorOf = (call: Call) => ({ type: call.actor.type, id: call.actor.id });

/** How many objects of each kind a package declares. */
const counts = (pkg: PluginPackage) => ({
  hooks: pkg.payload.hooks.length,
  subscriptions: pkg.payload.subscriptions.length,
  workflows: pkg.payload.workflows.length,
});

/** MAJOR.MINOR.PATCH compared number by number (the manifest decoder allows nothing else). */
export function compareVersions(a: string, b: string): number {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

export async function uploadVersion(
  deps: PluginDeps,
  call: Call,
  pkg: PluginPackage,
): Promise<{ plugin: PluginRow; version: VersionRow }> {
  return inChange(deps.db, call, async (tx, record) => {
    await insertPlugin(tx, call.realmId, newId('plg', call.now.getTime()), pkg.manifest.name, call.now);
    const plugin = (await findPluginByName(tx, call.realmId, pkg.manifest.name)) as PluginRow;
    if (await versionExists(tx, call.realmId, plugin.id, pkg.manifest.version))
      throw problem.conflict(`version ${pkg.manifest.version} of ${pkg.manifest.name} is already uploaded`);
    const version = await insertVersion(
      tx,
      call.realmId,
      {
        id: newId('plv', call.now.getTime()),
        pluginId: plugin.id,
        version: pkg.manifest.version,
        manifest: pkg.wire.manifest,
        payload: pkg.wire.payload,
        uploadedByType: call.actor.type,
        uploadedById: call.actor.id,
      },
      call.now,
    );
    await record.audit('plugin.version_uploaded', {
      category: 'configuration',
      target: target(plugin.id),
      data: { name: plugin.name, version: version.version, version_id: version.id, ...counts(pkg) },
    });
    return { plugin, version };
  });
}

/**
 * Approves an uploaded version. Under second_admin (the default) the administrator who uploaded
 * it cannot approve it; single_admin lets them (document 1, realm policy, extensions).
 */
export async function approvePluginVersion(
  deps: PluginDeps,
  call: Call,
  pluginId: string,
  versionId: string,
): Promise<VersionRow> {
  return inChange(deps.db, call, async (tx, record) => {
    const version = await findVersion(tx, call.realmId, pluginId, versionId, true);
    if (!version) throw problem.notFound('no such plugin version');
    if (version.state === 'approved') throw problem.conflict('this plugin version is already approved');
    const review = policyValue(await currentPolicy(tx, call.realmId), 'extensions', 'plugin_review');
    const sameAdmin =
      version.uploaded_by_type === call.actor.type && version.uploaded_by_id === call.actor.id;
    if (review !== 'single_admin' && sameAdmin)
      throw problem.forbidden(
        'the realm policy extensions.plugin_review is second_admin: an administrator other than the one who uploaded this version must approve it',
      );
    const approved = await approveVersion(tx, call.realmId, versionId, actorOf(call), call.now);
    await record.audit('plugin.version_approved', {
      category: 'configuration',
      target: target(pluginId),
      data: { version: version.version, version_id: versionId, review: review ?? 'second_admin' },
    });
    return approved;
  });
}

/** What an installation created; the signing secrets are shown this once. */
export interface Installed {
  plugin: PluginRow;
  version: VersionRow;
  hooks: { id: string; name: string; kind: string; signingSecret: string }[];
  subscriptions: { id: string; name: string; signingSecret: string }[];
  workflows: { id: string; name: string }[];
}

function keyringOf(deps: PluginDeps): RootKeyring {
  if (!deps.hookAdmin.keyring) throw problem.unavailable('no root key is configured to seal plugin secrets');
  return deps.hookAdmin.keyring;
}

/** 403 unless the installer holds every permission the manifest declares. */
async function ensureHoldsPermissions(tx: Tx, call: Call, installer: Delegator, wanted: readonly string[]) {
  if (wanted.length === 0) return;
  const held = await callerAuthority(tx, call.realmId, installer, REALM_CONTEXT, call.now);
  const missing = held.everything ? [] : wanted.filter((p) => !held.permissions.has(p));
  if (missing.length > 0)
    throw problem.forbidden(`installing this plugin needs the permissions ${missing.join(', ')}`);
}

/** The checks of an installation or upgrade made under the plugin's row lock. */
async function ensureInstallable(
  tx: Tx,
  call: Call,
  plugin: PluginRow,
  version: VersionRow,
  pkg: PluginPackage,
) {
  if (version.state !== 'approved')
    throw problem.conflict('this plugin version is not approved: an administrator must approve it first');
  if (plugin.installed_version_id === version.id) throw problem.conflict('this version is installed already');
  if (plugin.installed_version_id) {
    const current = (await findVersion(
      tx,
      call.realmId,
      plugin.id,
      plugin.installed_version_id,
    )) as VersionRow;
    if (compareVersions(version.version, current.version) <= 0)
      throw problem.conflict(`an upgrade installs a version newer than ${current.version}`);
  }
  const present = await installedAmong(tx, call.realmId, pkg.manifest.dependencies);
  const absent = pkg.manifest.dependencies.filter((d) => !present.includes(d));
  if (absent.length > 0) throw problem.conflict(`the plugin needs ${absent.join(', ')} installed first`);
}

/** Removes what the plugin manages now, as one part of the caller's change. */
async function removeObjects(tx: Tx, record: Recorder, call: Call, id: string) {
  return {
    hooks: await removePluginHooksInTx(tx, record, call, id),
    subscriptions: await removePluginSubscriptionsInTx(tx, record, call, id),
    workflows: await removePluginWorkflowsInTx(tx, record, call, id),
  };
}

/** Installs an approved version, or upgrades to it from an older one, as one change. */
export async function installPluginVersion(
  deps: PluginDeps,
  call: Call,
  installer: Delegator,
  pluginId: string,
  versionId: string,
): Promise<Installed> {
  const keyring = keyringOf(deps);
  const stored = await findVersion(deps.db, call.realmId, pluginId, versionId);
  if (!stored) throw problem.notFound('no such plugin version');
  if (stored.state !== 'approved')
    throw problem.conflict('this plugin version is not approved: an administrator must approve it first');
  const pkg = decodeParts(stored.manifest, stored.payload);
  for (const h of pkg.payload.hooks) await validateHookUrl(deps.hookAdmin, h);
  for (const s of pkg.payload.subscriptions) await validateSubscriptionDestination(deps.webhooks, s);
  const out = await inChange(deps.db, call, async (tx, record) => {
    const plugin = await findPlugin(tx, call.realmId, pluginId, true);
    if (!plugin) throw problem.notFound('no such plugin');
    const version = (await findVersion(tx, call.realmId, pluginId, versionId, true)) as VersionRow;
    await ensureInstallable(tx, call, plugin, version, pkg);
    await ensureHoldsPermissions(tx, call, installer, pkg.manifest.permissions);
    const from = plugin.installed_version_id;
    const removed = from ? await removeObjects(tx, record, call, pluginId) : null;
    const hooks = [];
    for (const h of pkg.payload.hooks) {
      const { row, secret } = await createHookInTx(tx, record, call, keyring, h, pluginId);
      hooks.push({ id: row.id, name: row.name, kind: row.kind, signingSecret: secret });
    }
    const subscriptions = [];
    for (const s of pkg.payload.subscriptions) {
      const { row, secret } = await createSubscriptionInTx(tx, record, call, keyring, s, pluginId);
      subscriptions.push({ id: row.id, name: row.name, signingSecret: secret });
    }
    const workflows = [];
    for (const w of pkg.payload.workflows) {
      const row = await createWorkflowInTx(tx, record, call, installer, w, pluginId);
      workflows.push({ id: row.id, name: row.name });
    }
    const updated = await setInstalled(tx, call.realmId, pluginId, versionId, actorOf(call), call.now);
    await record.audit(from ? 'plugin.upgraded' : 'plugin.installed', {
      category: 'configuration',
      target: target(pluginId),
      data: {
        name: plugin.name,
        version: version.version,
        version_id: versionId,
        ...(from ? { from_version_id: from, removed } : {}),
        ...counts(pkg),
      },
    });
    return { plugin: updated, version, hooks, subscriptions, workflows };
  });
  deps.hookAdmin.realms?.forget();
  return out;
}

/** Removes every object the plugin manages, as one change; its versions stay. */
export async function uninstallPlugin(deps: PluginDeps, call: Call, pluginId: string): Promise<PluginRow> {
  const out = await inChange(deps.db, call, async (tx, record) => {
    const plugin = await findPlugin(tx, call.realmId, pluginId, true);
    if (!plugin) throw problem.notFound('no such plugin');
    if (!plugin.installed_version_id) throw problem.conflict('this plugin is not installed');
    const dependents = await installedDependents(tx, call.realmId, plugin.name);
    if (dependents.length > 0)
      throw problem.conflict(`installed plugins depend on this one: ${dependents.join(', ')}`);
    const removed = await removeObjects(tx, record, call, pluginId);
    const updated = await setInstalled(tx, call.realmId, pluginId, null, actorOf(call), call.now);
    await record.audit('plugin.uninstalled', {
      category: 'configuration',
      target: target(pluginId),
      data: { name: plugin.name, version_id: plugin.installed_version_id, removed },
    });
    return updated;
  });
  deps.hookAdmin.realms?.forget();
  return out;
}

export async function readPlugin(db: Db, realmId: string, id: string) {
  const plugin = await findPlugin(db, realmId, id);
  if (!plugin) throw problem.notFound('no such plugin');
  return { plugin, versions: await versionsOf(db, realmId, id) };
}

export async function readPluginVersion(db: Db, realmId: string, pluginId: string, id: string) {
  const v = await findVersion(db, realmId, pluginId, id);
  if (!v) throw problem.notFound('no such plugin version');
  return v;
}

export const listPluginPage = async (
  db: Db,
  page: { realmId: string; after: string | null; limit: number },
): Promise<Page<PluginRow>> =>
  cutPage(await listPlugins(db, page.realmId, page.after, page.limit + 1), page.limit);
