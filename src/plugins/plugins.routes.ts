// HTTP edge of plugins (docs/plugins.md) under /api/v1/realms/{realm}: upload a version
// (realm.plugins.write), approve it (realm.plugins.review), install or upgrade to it and uninstall
// (realm.plugins.write); reads need realm.plugins.read.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { cursorBinding, makeCursor, openCursor, pageLimit, queryParams } from '../platform/http/keyset.ts';
import { iso } from '../roles/admin-call.ts';
import { idParam } from '../roles/roles.decode.ts';
import { decodePluginPackage } from './plugins.decode.ts';
import type { PluginRow, VersionRow } from './plugins.repo.ts';
import {
  approvePluginVersion,
  type Installed,
  installPluginVersion,
  listPluginPage,
  type PluginDeps,
  readPlugin,
  readPluginVersion,
  uninstallPlugin,
  uploadVersion,
} from './plugins.service.ts';

const READ = { audience: 'admin', permissions: ['realm.plugins.read'] } as const;
const WRITE = { audience: 'admin', permissions: ['realm.plugins.write'] } as const;
const REVIEW = { audience: 'admin', permissions: ['realm.plugins.review'] } as const;
const PLUGIN_ID = /^plg_[0-9a-z]{26}$/;

const presentPlugin = (p: PluginRow) => ({
  id: p.id,
  name: p.name,
  installed_version_id: p.installed_version_id,
  installed_by: p.installed_by_type ? { type: p.installed_by_type, id: p.installed_by_id } : null,
  installed_at: iso(p.installed_at),
  created_at: iso(p.created_at),
  updated_at: iso(p.updated_at),
});

/** A version's summary; `full` adds the manifest and payload as uploaded. */
const presentVersion = (v: VersionRow, full = false) => ({
  id: v.id,
  plugin_id: v.plugin_id,
  version: v.version,
  state: v.state,
  uploaded_by: { type: v.uploaded_by_type, id: v.uploaded_by_id },
  approved_by: v.approved_by_type ? { type: v.approved_by_type, id: v.approved_by_id } : null,
  approved_at: iso(v.approved_at),
  created_at: iso(v.created_at),
  ...(full ? { manifest: v.manifest, payload: v.payload } : {}),
});

const presentInstalled = (i: Installed) => ({
  plugin: presentPlugin(i.plugin),
  version: presentVersion(i.version),
  hooks: i.hooks.map((h) => ({ id: h.id, name: h.name, kind: h.kind, signing_secret: h.signingSecret })),
  subscriptions: i.subscriptions.map((s) => ({ id: s.id, name: s.name, signing_secret: s.signingSecret })),
  workflows: i.workflows,
});

const pluginParam = (raw: string) => idParam('plg', raw, 'plugin');
const versionParam = (raw: string) => idParam('plv', raw, 'plugin version');

type P = { plugin: string };
type PV = { plugin: string; version: string };

export function registerPluginRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const deps: PluginDeps = { db: ctx.db, hookAdmin: ctx.hookAdmin, webhooks: ctx.webhooks };

  apiRoute(app, ctx, 'POST', '/plugins', WRITE, async ({ req, reply, realm, call }) => {
    const { plugin, version } = await uploadVersion(deps, call, decodePluginPackage(req.body));
    return reply
      .code(201)
      .header('location', `/api/v1/realms/${realm.name}/plugins/${plugin.id}/versions/${version.id}`)
      .send(presentVersion(version, true));
  });

  apiRoute(app, ctx, 'GET', '/plugins', READ, async ({ req, realm }) => {
    const param = queryParams(req.query, []);
    const limit = pageLimit(param('limit'), ctx.config.limits);
    const binding = cursorBinding([realm.id, 'plugins']);
    const after = openCursor(param('cursor'), binding, (id) => PLUGIN_ID.test(id));
    const page = await listPluginPage(ctx.db, { realmId: realm.id, after, limit });
    return {
      items: page.items.map(presentPlugin),
      next_cursor: page.nextAfter === null ? null : makeCursor(page.nextAfter, binding),
    };
  });

  apiRoute<P>(app, ctx, 'GET', '/plugins/:plugin', READ, async ({ req, realm }) => {
    const { plugin, versions } = await readPlugin(ctx.db, realm.id, pluginParam(req.params.plugin));
    return { ...presentPlugin(plugin), versions: versions.map((v) => presentVersion(v)) };
  });

  apiRoute<PV>(app, ctx, 'GET', '/plugins/:plugin/versions/:version', READ, async ({ req, realm }) => {
    const v = await readPluginVersion(
      ctx.db,
      realm.id,
      pluginParam(req.params.plugin),
      versionParam(req.params.version),
    );
    return presentVersion(v, true);
  });

  apiRoute<PV>(
    app,
    ctx,
    'POST',
    '/plugins/:plugin/versions/:version/approve',
    REVIEW,
    async ({ req, call }) => {
      decodeNoBody(req.body);
      const v = await approvePluginVersion(
        deps,
        call,
        pluginParam(req.params.plugin),
        versionParam(req.params.version),
      );
      return presentVersion(v);
    },
  );

  apiRoute<PV>(
    app,
    ctx,
    'POST',
    '/plugins/:plugin/versions/:version/install',
    WRITE,
    async ({ req, reply, call, caller }) => {
      decodeNoBody(req.body);
      const installed = await installPluginVersion(
        deps,
        call,
        caller,
        pluginParam(req.params.plugin),
        versionParam(req.params.version),
      );
      return reply.header('cache-control', 'no-store').send(presentInstalled(installed));
    },
  );

  apiRoute<P>(app, ctx, 'POST', '/plugins/:plugin/uninstall', WRITE, async ({ req, call }) => {
    decodeNoBody(req.body);
    return presentPlugin(await uninstallPlugin(deps, call, pluginParam(req.params.plugin)));
  });
}
