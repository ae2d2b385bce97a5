// Certificate trust anchors (docs/certificate-signin.md): the CA certificates a realm trusts to
// issue its users' sign-in certificates, whether a certificate from one counts as multi-factor
// (smart card or PIV token with a PIN), and which certificate field names the account. Removing
// an anchor stops its certificates at the next sign-in; sessions already made stay.
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/api.deps.ts';
import { apiRoute } from '../../api/api-route.ts';
import { recorder } from '../../audit/index.ts';
import { boolean, decodeBody, enumOf, object, optional, string } from '../../platform/http/decode.ts';
import { Problem, problem } from '../../platform/http/problem.ts';
import { newId } from '../../platform/ids.ts';
import { caCertificate } from '../webauthn/cert-path.ts';
import {
  countTrustAnchors,
  deleteTrustAnchor,
  findTrustAnchor,
  findTrustAnchorByFingerprint,
  insertTrustAnchor,
  listTrustAnchors,
  type TrustAnchorRow,
} from './trust-anchors.repo.ts';

const READ = { audience: 'admin', permissions: ['realm.settings.read'] } as const;
const WRITE = { audience: 'admin', permissions: ['realm.settings.write'] } as const;
export const MAX_TRUST_ANCHORS = 50;
const ID = /^cta_[0-9a-z]{26}$/;

const body = object({
  description: string({ minLength: 1, maxLength: 200 }),
  certificate: string({ minLength: 1, maxLength: 16_384 }),
  multi_factor: optional(boolean(), false),
  user_mapping: optional(
    object({
      source: enumOf(['san_email', 'san_upn', 'subject_email', 'subject_cn'] as const),
      identifier: enumOf(['email', 'username'] as const),
    }),
    { source: 'san_email', identifier: 'email' },
  ),
});

function present(a: TrustAnchorRow) {
  return {
    id: a.id,
    description: a.description,
    certificate: a.certificate,
    subject: a.subject,
    fingerprint_sha256: a.fingerprint_sha256,
    multi_factor: a.multi_factor,
    user_mapping: { source: a.mapping_source, identifier: a.mapping_identifier },
    not_after: new Date(a.not_after).toISOString(),
    created_at: new Date(a.created_at).toISOString(),
  };
}

export function registerCertificateTrustAnchorRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  apiRoute(app, ctx, 'GET', '/certificate-trust-anchors', READ, async ({ realm }) => ({
    items: (await listTrustAnchors(ctx.db, realm.id)).map(present),
  }));

  apiRoute<{ id: string }>(
    app,
    ctx,
    'GET',
    '/certificate-trust-anchors/:id',
    READ,
    async ({ req, realm }) => {
      const found = ID.test(req.params.id) ? await findTrustAnchor(ctx.db, realm.id, req.params.id) : null;
      if (!found) throw problem.notFound('no such certificate trust anchor');
      return present(found);
    },
  );

  apiRoute(app, ctx, 'POST', '/certificate-trust-anchors', WRITE, async ({ req, reply, realm, call }) => {
    const input = decodeBody(body, req.body ?? {});
    const checked = caCertificate(input.certificate, call.now);
    if (!checked.ok)
      throw problem.validation([{ field: 'certificate', code: checked.code, detail: checked.detail }]);
    const { cert } = checked;
    const fingerprint = createHash('sha256').update(Buffer.from(cert.rawData)).digest('hex');
    const created = await ctx.db.tx(async (q) => {
      // One realm's anchors are added one at a time, so the count limit holds under concurrency.
      await q.query('select 1 from realms where id = $1 for update', [realm.id]);
      if (await findTrustAnchorByFingerprint(q, realm.id, fingerprint))
        throw new Problem(409, 'conflict', 'this CA certificate is a trust anchor already');
      if ((await countTrustAnchors(q, realm.id)) >= MAX_TRUST_ANCHORS)
        throw new Problem(
          409,
          'conflict',
          `a realm has at most ${MAX_TRUST_ANCHORS} certificate trust anchors`,
        );
      const row = await insertTrustAnchor(
        q,
        realm.id,
        {
          id: newId('cta', call.now.getTime()),
          description: input.description,
          certificate: cert.toString('pem'),
          subject: cert.subject,
          fingerprint_sha256: fingerprint,
          multi_factor: input.multiFactor,
          mapping_source: input.userMapping.source,
          mapping_identifier: input.userMapping.identifier,
          not_after: cert.notAfter,
        },
        call.now,
      );
      await recorder(q, call).audit('certificate_trust_anchor.added', {
        category: 'configuration',
        target: { type: 'certificate_trust_anchor', id: row.id },
        data: {
          subject: row.subject,
          fingerprint_sha256: row.fingerprint_sha256,
          multi_factor: row.multi_factor,
          user_mapping: { source: row.mapping_source, identifier: row.mapping_identifier },
        },
      });
      return row;
    });
    return reply
      .code(201)
      .header('location', `/api/v1/realms/${realm.name}/certificate-trust-anchors/${created.id}`)
      .send(present(created));
  });

  apiRoute<{ id: string }>(
    app,
    ctx,
    'DELETE',
    '/certificate-trust-anchors/:id',
    WRITE,
    async ({ req, reply, realm, call }) => {
      if (!ID.test(req.params.id)) throw problem.notFound('no such certificate trust anchor');
      await ctx.db.tx(async (q) => {
        const gone = await deleteTrustAnchor(q, realm.id, req.params.id);
        if (!gone) throw problem.notFound('no such certificate trust anchor');
        await recorder(q, call).audit('certificate_trust_anchor.removed', {
          category: 'configuration',
          target: { type: 'certificate_trust_anchor', id: gone.id },
          data: { subject: gone.subject, fingerprint_sha256: gone.fingerprint_sha256 },
        });
      });
      return reply.code(204).send();
    },
  );
}
