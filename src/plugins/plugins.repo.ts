// SQL of plugins and their versions (migrations/0063_plugins.sql). Every statement filters on the realm.
import { jsonColumn, many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';

export interface PluginRow {
  realm_id: string;
  id: string;
  name: string;
  installed_version_id: string | null;
  installed_by_type: string | null;
  installed_by_id: string | null;
  installed_at: Date | null;
  revision: number;
  created_at: Date;
  updated_at: Date;
}

export type VersionState = 'uploaded' | 'approved';

export interface VersionRow {
  realm_id: string;
  id: string;
  plugin_id: string;
  version: string;
  manifest: Record<string, unknown>;
  payload: Record<string, unknown>;
  state: VersionState;
  uploaded_by_type: string;
  uploaded_by_id: string | null;
  approved_by_type: string | null;
  approved_by_id: string | null;
  approved_at: Date | null;
  created_at: Date;
}

const versionOf = (r: VersionRow): VersionRow => ({
  ...r,
  manifest: jsonColumn(r.manifest),
  payload: jsonColumn(r.payload),
});

export const findPluginByName = (q: Queryable, realmId: string, name: string) =>
  maybeOne<PluginRow>(q, 'select * from plugins where realm_id = $1 and name = $2 for update', [
    realmId,
    name,
  ]);

export const findPlugin = (q: Queryable, realmId: string, id: string, lock = false) =>
  maybeOne<PluginRow>(
    q,
    `select * from plugins where realm_id = $1 and id = $2${lock ? ' for update' : ''}`,
    [realmId, id],
  );

/** Adds the plugin unless one of the name exists (a concurrent upload may have added it). */
export async function insertPlugin(tx: Tx, realmId: string, id: string, name: string, now: Date) {
  await tx.query(
    `insert into plugins (realm_id, id, name, created_at, updated_at) values ($1, $2, $3, $4, $4)
     on conflict (realm_id, name) do nothing`,
    [realmId, id, name, now],
  );
}

/** The names of the installed plugins whose installed version depends on `name`. */
export const installedDependents = async (q: Queryable, realmId: string, name: string) =>
  (
    await many<{ name: string }>(
      q,
      `select p.name from plugins p
         join plugin_versions v on v.realm_id = p.realm_id and v.id = p.installed_version_id
        where p.realm_id = $1 and v.manifest -> 'dependencies' @> to_jsonb($2::text)
        order by p.name`,
      [realmId, name],
    )
  ).map((r) => r.name);

/** The names among `names` of the plugins installed now. */
export const installedAmong = async (q: Queryable, realmId: string, names: readonly string[]) =>
  (
    await many<{ name: string }>(
      q,
      `select name from plugins where realm_id = $1 and name = any($2::text[])
          and installed_version_id is not null`,
      [realmId, names],
    )
  ).map((r) => r.name);

export const listPlugins = (q: Queryable, realmId: string, after: string | null, limit: number) =>
  many<PluginRow>(
    q,
    'select * from plugins where realm_id = $1 and ($2::text is null or id > $2) order by id limit $3',
    [realmId, after, limit],
  );

export interface NewVersion {
  id: string;
  pluginId: string;
  version: string;
  manifest: unknown;
  payload: unknown;
  uploadedByType: string;
  uploadedById: string | null;
}

export async function insertVersion(tx: Tx, realmId: string, v: NewVersion, now: Date): Promise<VersionRow> {
  const r = await tx.query<VersionRow>(
    `insert into plugin_versions (realm_id, id, plugin_id, version, manifest, payload, state,
       uploaded_by_type, uploaded_by_id, created_at)
     values ($1, $2, $3, $4, $5::jsonb, $6::jsonb, 'uploaded', $7, $8, $9) returning *`,
    [
      realmId,
      v.id,
      v.pluginId,
      v.version,
      JSON.stringify(v.manifest),
      JSON.stringify(v.payload),
      v.uploadedByType,
      v.uploadedById,
      now,
    ],
  );
  return versionOf(r.rows[0]!);
}

export const versionExists = async (q: Queryable, realmId: string, pluginId: string, version: string) =>
  (
    await q.query('select 1 from plugin_versions where realm_id = $1 and plugin_id = $2 and version = $3', [
      realmId,
      pluginId,
      version,
    ])
  ).rows.length > 0;

export async function findVersion(
  q: Queryable,
  realmId: string,
  pluginId: string,
  id: string,
  lock = false,
): Promise<VersionRow | null> {
  const r = await maybeOne<VersionRow>(
    q,
    `select * from plugin_versions where realm_id = $1 and plugin_id = $2 and id = $3${lock ? ' for update' : ''}`,
    [realmId, pluginId, id],
  );
  return r ? versionOf(r) : null;
}

export const versionsOf = async (q: Queryable, realmId: string, pluginId: string) =>
  (
    await many<VersionRow>(
      q,
      'select * from plugin_versions where realm_id = $1 and plugin_id = $2 order by id',
      [realmId, pluginId],
    )
  ).map(versionOf);

export async function approveVersion(
  tx: Tx,
  realmId: string,
  id: string,
  by: { type: string; id: string | null },
  now: Date,
): Promise<VersionRow> {
  const r = await tx.query<VersionRow>(
    `update plugin_versions set state = 'approved', approved_by_type = $3, approved_by_id = $4, approved_at = $5
      where realm_id = $1 and id = $2 returning *`,
    [realmId, id, by.type, by.id, now],
  );
  return versionOf(r.rows[0]!);
}

/** Records which version is installed now (null: none), by whom and when. */
export async function setInstalled(
  tx: Tx,
  realmId: string,
  pluginId: string,
  versionId: string | null,
  by: { type: string; id: string | null },
  now: Date,
): Promise<PluginRow> {
  const r = await tx.query<PluginRow>(
    `update plugins set installed_version_id = $3, installed_by_type = $4, installed_by_id = $5,
            installed_at = $6, revision = revision + 1, updated_at = $7
      where realm_id = $1 and id = $2 returning *`,
    [
      realmId,
      pluginId,
      versionId,
      versionId ? by.type : null,
      versionId ? by.id : null,
      versionId ? now : null,
      now,
    ],
  );
  return r.rows[0]!;
}
