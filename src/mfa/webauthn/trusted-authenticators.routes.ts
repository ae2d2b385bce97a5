// Passkey trusted authenticators (spec doc 1, "Passkey trusted authenticators"; Limits): the
// authenticator models a realm trusts and the CA certificates their attestation chains to. A
// realm entry wins over the operator's FIDO metadata for the same AAGUID; removing one leaves
// existing passkeys working (their recorded trust is history, not a live check).
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/api.deps.ts';
import { apiRoute } from '../../api/api-route.ts';
import { recorder } from '../../audit/index.ts';
import { array, decodeBody, object, string } from '../../platform/http/decode.ts';
import { type FieldError, Problem, problem } from '../../platform/http/problem.ts';
import { newId } from '../../platform/ids.ts';
import { caCertificate } from './cert-path.ts';
import {
  countTrustedAuthenticators,
  deleteTrustedAuthenticator,
  findTrustedAuthenticator,
  insertTrustedAuthenticator,
  listTrustedAuthenticators,
  lockRealmTrustList,
  type TrustedAuthenticatorRow,
} from './passkeys.repo.ts';
import { ZERO_AAGUID } from './webauthn-policy.ts';

const READ = { audience: 'admin', permissions: ['realm.settings.read'] } as const;
const WRITE = { audience: 'admin', permissions: ['realm.settings.write'] } as const;
export const MAX_TRUSTED_AUTHENTICATORS = 200;

const AAGUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const body = object({
  aaguid: string({ minLength: 36, maxLength: 36 }),
  description: string({ minLength: 1, maxLength: 200 }),
  root_certificates: array(string({ minLength: 1, maxLength: 16_384 }), { minItems: 1, maxItems: 10 }),
});

/** Field problems of a new entry: lower-case non-zero AAGUID, unexpired CA certificates. */
function entryErrors(aaguid: string, pems: string[], now: Date): FieldError[] {
  const errors: FieldError[] = [];
  if (!AAGUID.test(aaguid) || aaguid === ZERO_AAGUID)
    errors.push({ field: 'aaguid', code: 'pattern', detail: 'a lower-case, non-zero AAGUID' });
  pems.forEach((pem, i) => {
    const checked = caCertificate(pem, now);
    if (!checked.ok)
      errors.push({ field: `root_certificates.${i}`, code: checked.code, detail: checked.detail });
  });
  return errors;
}

function present(t: TrustedAuthenticatorRow) {
  return {
    id: t.id,
    aaguid: t.aaguid,
    description: t.description,
    root_certificates: t.root_certificates,
    created_at: new Date(t.created_at).toISOString(),
  };
}

export function registerTrustedAuthenticatorRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  apiRoute(app, ctx, 'GET', '/webauthn/trusted-authenticators', READ, async ({ realm }) => ({
    items: (await listTrustedAuthenticators(ctx.db, realm.id)).map(present),
  }));

  apiRoute(
    app,
    ctx,
    'POST',
    '/webauthn/trusted-authenticators',
    WRITE,
    async ({ req, reply, realm, call }) => {
      const input = decodeBody(body, req.body ?? {});
      const errors = entryErrors(input.aaguid, input.rootCertificates, call.now);
      if (errors.length > 0) throw problem.validation(errors);
      const created = await ctx.db.tx(async (q) => {
        // Entries of one realm are added one at a time, so the count limit holds under concurrency.
        await lockRealmTrustList(q, realm.id);
        if (await findTrustedAuthenticator(q, realm.id, input.aaguid))
          throw new Problem(409, 'conflict', 'this AAGUID is listed already');
        if ((await countTrustedAuthenticators(q, realm.id)) >= MAX_TRUSTED_AUTHENTICATORS)
          throw new Problem(
            409,
            'conflict',
            `a realm lists at most ${MAX_TRUSTED_AUTHENTICATORS} trusted authenticators`,
          );
        const row = await insertTrustedAuthenticator(
          q,
          realm.id,
          {
            id: newId('wta', call.now.getTime()),
            aaguid: input.aaguid,
            description: input.description,
            root_certificates: input.rootCertificates.map((p) => `${p.trim()}\n`),
          },
          call.now,
        );
        await recorder(q, call).audit('webauthn.trusted_authenticator.added', {
          category: 'configuration',
          target: { type: 'trusted_authenticator', id: row.id },
          data: { aaguid: row.aaguid, root_certificates: row.root_certificates.length },
        });
        return row;
      });
      return reply
        .code(201)
        .header('location', `/api/v1/realms/${realm.name}/webauthn/trusted-authenticators/${created.id}`)
        .send(present(created));
    },
  );

  apiRoute<{ id: string }>(
    app,
    ctx,
    'DELETE',
    '/webauthn/trusted-authenticators/:id',
    WRITE,
    async ({ req, reply, realm, call }) => {
      if (!/^wta_[0-9a-z]{26}$/.test(req.params.id)) throw problem.notFound('no such trusted authenticator');
      await ctx.db.tx(async (q) => {
        const gone = await deleteTrustedAuthenticator(q, realm.id, req.params.id);
        if (!gone) throw problem.notFound('no such trusted authenticator');
        await recorder(q, call).audit('webauthn.trusted_authenticator.removed', {
          category: 'configuration',
          target: { type: 'trusted_authenticator', id: gone.id },
          data: { aaguid: gone.aaguid },
        });
      });
      return reply.code(204).send();
    },
  );
}
