// The built-in login UI and account page (docs/login-ui.md): static files built from ui/ into
// dist/ui (`npm run build:ui`), served under /ui/ on the public listener. Only the files found
// in the built folder at start-up are served (an allow-list of names and extensions, read once
// into memory), so no request path ever reaches the file system.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { BUILTIN_UI_PATH } from '../clients/builtin-clients.ts';
import { problem } from '../platform/http/problem.ts';
import type { Logger } from '../platform/log.ts';

/** Where `npm run build:ui` writes; the same from src/main/ (tsx) and dist/main/ (built). */
export const BUILT_UI_DIR = join(import.meta.dirname, '..', '..', 'dist', 'ui');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

// Scripts and styles from this origin only, no inline code, no framing; the pages call only this
// origin's APIs (a deployment hosting the UI elsewhere sets its own policy).
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** Every servable file under dir, keyed by its URL path below /ui/. */
export function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      if (name.startsWith('.')) continue;
      const path = join(d, name);
      if (statSync(path).isDirectory()) {
        walk(path);
        continue;
      }
      const type = TYPES[extname(name)];
      if (!type) continue; // source maps, declaration files and anything else stay unserved
      const body = readFileSync(path);
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      const key = relative(dir, path).split(sep).join('/');
      assets.set(key, { body, type, etag });
      // A folder's index.html is its page: /ui/login/ serves login/index.html.
      if (name === 'index.html') assets.set(key.slice(0, -'index.html'.length), { body, type, etag });
    }
  };
  if (existsSync(dir)) walk(dir);
  return assets;
}

function send(reply: FastifyReply, asset: Asset, ifNoneMatch: string | undefined) {
  reply
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin')
    // File names carry no content hash, so every use revalidates (cheap with the ETag).
    .header('cache-control', 'no-cache')
    .header('etag', asset.etag);
  if (ifNoneMatch === asset.etag) return reply.code(304).send();
  return reply.type(asset.type).send(asset.body);
}

export function registerBuiltinUi(app: FastifyInstance, log: Logger, dir = BUILT_UI_DIR): void {
  const assets = loadAssets(dir);
  if (!assets.has('login/')) {
    log.warn({ dir }, 'the built-in login UI is not built (run `npm run build:ui`); /ui/ answers 503');
  }
  const prefix = BUILTIN_UI_PATH;
  app.get<{ Params: { '*': string } }>(`${prefix}*`, async (req, reply) => {
    const path = req.params['*'];
    const asset = assets.get(path);
    if (asset) return send(reply, asset, req.headers['if-none-match']);
    // /ui/login -> /ui/login/, so relative script and style references resolve.
    if (assets.has(`${path}/`)) {
      const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
      return reply.code(308).header('location', `${prefix}${path}/${query}`).send();
    }
    if (assets.size === 0) throw problem.unavailable('the built-in login UI is not built');
    throw problem.notFound('no such file');
  });
}
