// HTTP edge of a realm's brand (docs/login-ui.md, "Branding"). Public: GET /branding (name, colour,
// support contact, logo URL) for login pages, and GET /branding/logo, the image itself, from this
// origin with its sniffed type and nosniff. Administration: PUT /branding/logo {image: base64}
// and DELETE /branding/logo, audited in the transaction that stores the image.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { inChange } from '../audit/index.ts';
import { decodeBody, object, string } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { brandOf, logoDigestOf, MAX_LOGO_BYTES, sniffImage } from './branding.ts';
import { deleteRealmLogo, findRealmLogo, putRealmLogo, realmLogoDigest } from './logo.repo.ts';
import { currentPolicy } from './policy.repo.ts';
import { findRequestedRealm } from './realm-cache.ts';

const WRITE = { audience: 'admin', permissions: ['realm.settings.write'] } as const;

// base64 of MAX_LOGO_BYTES, padded.
const MAX_BASE64 = Math.ceil(MAX_LOGO_BYTES / 3) * 4;
const logoBody = object({
  image: string({ minLength: 4, maxLength: MAX_BASE64, pattern: /[A-Za-z0-9+/]+={0,2}/ }),
});

/** The decoded image with its type, or the 422 naming `image`. */
function acceptedImage(base64: string): { body: Buffer; type: 'image/png' | 'image/jpeg' | 'image/webp' } {
  const body = Buffer.from(base64, 'base64');
  const refuse = (code: string, detail: string) =>
    problem.validation([{ field: 'image', code, detail }], 'the logo was not accepted');
  if (body.length > MAX_LOGO_BYTES) throw refuse('too_large', `at most ${MAX_LOGO_BYTES} bytes`);
  const type = sniffImage(body);
  if (!type) throw refuse('unsupported_type', 'a PNG, JPEG or WebP image');
  return { body, type };
}

export function registerBrandingRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  type Req = { Params: { realm: string }; Querystring: Record<string, string> };
  const realmOf = async (name: string) => {
    const realm = await findRequestedRealm(ctx, name);
    if (!realm) throw problem.notFound('no such realm');
    return realm;
  };

  app.get<Req>('/api/v1/realms/:realm/branding', async (req, reply) => {
    const realm = await realmOf(req.params.realm);
    const [policy, digest] = await Promise.all([
      currentPolicy(ctx.db, realm.id),
      realmLogoDigest(ctx.db, realm.id),
    ]);
    return reply
      .header('cache-control', 'no-cache')
      .header('access-control-allow-origin', '*')
      .send(brandOf(realm, policy, digest));
  });

  app.get<Req>('/api/v1/realms/:realm/branding/logo', async (req, reply) => {
    const realm = await realmOf(req.params.realm);
    const logo = await findRealmLogo(ctx.db, realm.id);
    if (!logo) throw problem.notFound('the realm has no logo');
    const etag = `"${logo.digest.slice(0, 22)}"`;
    reply
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('cross-origin-resource-policy', 'cross-origin')
      .header('cache-control', 'public, max-age=300')
      .header('etag', etag);
    if (req.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type(logo.contentType).send(logo.body);
  });

  apiRoute(app, ctx, 'PUT', '/branding/logo', WRITE, async ({ req, reply, realm, call }) => {
    const { image } = decodeBody(logoBody, req.body);
    const { body, type } = acceptedImage(image);
    const digest = logoDigestOf(body);
    await inChange(ctx.db, call, async (tx, record) => {
      await putRealmLogo(tx, realm.id, { contentType: type, body, digest, updatedAt: call.now });
      await record.audit('realm.logo.updated', {
        category: 'configuration',
        target: { type: 'realm', id: realm.id },
        signal: 'configuration_change',
        data: { content_type: type, bytes: body.length, digest },
      });
    });
    const policy = await currentPolicy(ctx.db, realm.id);
    return reply.header('cache-control', 'no-store').send(brandOf(realm, policy, digest));
  });

  apiRoute(app, ctx, 'DELETE', '/branding/logo', WRITE, async ({ reply, realm, call }) => {
    const removed = await inChange(ctx.db, call, async (tx, record) => {
      if (!(await deleteRealmLogo(tx, realm.id))) return false;
      await record.audit('realm.logo.removed', {
        category: 'configuration',
        target: { type: 'realm', id: realm.id },
        signal: 'configuration_change',
      });
      return true;
    });
    if (!removed) throw problem.notFound('the realm has no logo');
    return reply.code(204).send();
  });
}
