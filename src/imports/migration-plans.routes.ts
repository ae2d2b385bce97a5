// GET /migration-adapters and POST /migration-plans (spec doc 2, "Migration adapters": APIs
// used; docs/migration.md, Plans on the server): the conversion identity-cli migrate-from does,
// done server-side for a plan. Nothing is written: the answer is the report, the organizations
// that would be reused, created or conflict, and the mapped roles the realm lacks.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { resolveImportOrganizations } from '../organizations/index.ts';
import { many, type Queryable } from '../platform/db/db.ts';
import {
  array,
  boolean,
  decodeBody,
  enumOf,
  integer,
  object,
  optional,
  string,
  unknownJson,
} from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import {
  ADAPTERS,
  AdapterError,
  adapterNamed,
  buildDocuments,
  conversionReport,
  defaultMappingOf,
  planOrganizations,
  readMapping,
} from './adapters/index.ts';
import { IMPORT_PERMISSION } from './user-import.authority.ts';
import { SOURCE_SYSTEM } from './user-import.format.ts';

const IMPORT = { audience: 'admin', permissions: [IMPORT_PERMISSION] } as const;

const planBody = object({
  adapter: enumOf(['keycloak', 'zitadel', 'supertokens'] as const),
  source_system: string({ pattern: SOURCE_SYSTEM }),
  source_version: optional(string({ minLength: 1, maxLength: 40, printableAscii: true })),
  documents: array(unknownJson(), { minItems: 1, maxItems: 20 }),
  mapping: optional(unknownJson()),
  import_totp: optional(boolean()),
  trust_email_verification: optional(boolean()),
  verification_reason: optional(string({ minLength: 10, maxLength: 500 })),
  allow_owner_roles: optional(boolean()),
  keep_attributes: optional(boolean()),
  batch_size: optional(integer({ min: 1, max: 1000 })),
});

/** Realm-wide organization role names, lower case (the ones a mapping may name). */
async function organizationRoleNames(q: Queryable, realmId: string): Promise<Set<string>> {
  const rows = await many<{ name: string }>(
    q,
    `select name from roles where realm_id = $1 and scope = 'organization'
        and project_id is null and organization_id is null`,
    [realmId],
  );
  return new Set(rows.map((r) => r.name.toLowerCase()));
}

export function registerMigrationPlanRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  apiRoute(app, ctx, 'GET', '/migration-adapters', IMPORT, async () => ({
    items: ADAPTERS.map((a) => ({
      name: a.name,
      product: a.product,
      accepted_major: a.major,
      version_from: a.versionInExport,
    })),
  }));

  apiRoute(app, ctx, 'POST', '/migration-plans', IMPORT, async ({ req, call }) => {
    const body = decodeBody(planBody, req.body);
    const adapter = adapterNamed(body.adapter);
    if (!adapter) throw problem.invalidRequest('unknown adapter');
    try {
      const conversion = adapter.convert(body.documents, {
        sourceSystem: body.sourceSystem,
        sourceVersion: body.sourceVersion,
        keepAttributes: body.keepAttributes === true,
      });
      const mapping = body.mapping === undefined ? defaultMappingOf() : readMapping(body.mapping);
      const built = buildDocuments(conversion, mapping, {
        sourceSystem: body.sourceSystem,
        importTotp: body.importTotp === true,
        trustEmailVerification: body.trustEmailVerification === true,
        verificationReason: body.verificationReason,
        allowOwnerRoles: body.allowOwnerRoles === true,
        batchSize: body.batchSize ?? 500,
      });
      const refs = conversion.organizations.flatMap((o) => [
        { externalId: o.externalId },
        { slug: mapping.organizations[o.externalId]?.slug ?? o.proposedSlug },
      ]);
      const known = await resolveImportOrganizations(ctx.db, call.realmId, refs);
      const organizations = planOrganizations(
        conversion,
        mapping,
        (ext) => known.get(`ext:${ext}`),
        (slug) => known.get(`slug:${slug}`),
      );
      const roles = await organizationRoleNames(ctx.db, call.realmId);
      const missing = built.mappedRoles.filter((r) => !roles.has(r));
      return {
        ...conversionReport(adapter, conversion, body.sourceSystem, built),
        mode: 'plan',
        organizations,
        missing_roles: missing,
        blocked: missing.length > 0 || organizations.some((o) => o.action === 'conflict'),
      };
    } catch (e) {
      if (e instanceof AdapterError)
        throw problem.validation([
          { field: e.member.replace(/^input/, 'documents'), code: e.code, detail: e.message },
        ]);
      throw e;
    }
  });
}
