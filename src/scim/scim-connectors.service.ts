// SCIM connectors (docs/scim.md): created with a bearer credential shown once, revoked for good.
// Each change writes the row and its audit record in one transaction; creating one carries the
// credential_issued signal (its security.alert event rides in the same transaction).
import { inChange } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import { findOrganization } from '../organizations/index.ts';
import type { Db, Queryable } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import {
  findConnectorVerifier,
  insertConnector,
  lockConnector,
  type ScimConnectorRow,
  setConnectorRevoked,
} from './scim-connectors.repo.ts';
import { newScimToken, scimSecretMatches } from './scim-credential.ts';

/** A realm connector (organizationId null), or one of an organization that must be active. */
export async function createConnector(
  db: Db,
  call: Call,
  name: string,
  organizationId: string | null = null,
): Promise<{ row: ScimConnectorRow; token: string }> {
  return inChange(db, call, async (tx, record) => {
    if (organizationId !== null) {
      const org = await findOrganization(tx, call.realmId, organizationId);
      if (!org) throw problem.notFound('no such organization');
      if (org.state !== 'active') throw problem.conflict('the organization is not active');
    }
    const id = newId('scc', call.now.getTime());
    const { token, digest } = newScimToken(id);
    await insertConnector(tx, call.realmId, { id, name, secretDigest: digest, organizationId }, call.now);
    await record.audit('scim_connector.created', {
      category: 'security',
      target: { type: 'scim_connector', id },
      signal: 'credential_issued',
      ...(organizationId === null ? {} : { orgId: organizationId }),
      data: { name, organization_id: organizationId },
    });
    return {
      row: { id, name, organization_id: organizationId, created_at: call.now, revoked_at: null },
      token,
    };
  });
}

/**
 * Revoking a revoked connector changes and audits nothing. On an organization's routes
 * (organizationId given) only that organization's connectors are found.
 */
export async function revokeConnector(
  db: Db,
  call: Call,
  id: string,
  organizationId: string | null = null,
): Promise<void> {
  await inChange(db, call, async (tx, record) => {
    const c = await lockConnector(tx, call.realmId, id);
    if (!c || c.organization_id !== organizationId) throw problem.notFound('no such SCIM connector');
    if (c.revoked_at !== null) return;
    await setConnectorRevoked(tx, call.realmId, id, call.now);
    await record.audit('scim_connector.revoked', {
      category: 'security',
      target: { type: 'scim_connector', id },
    });
  });
}

const UNKNOWN_DIGEST = '0'.repeat(64);

/** The live connector a presented credential names, or null; the digest is compared even for an unknown id. */
export async function connectorOfToken(
  q: Queryable,
  realmId: string,
  presented: { id: string; secret: string },
): Promise<ScimConnectorRow | null> {
  const c = await findConnectorVerifier(q, realmId, presented.id);
  const ok = scimSecretMatches(presented.secret, c?.secret_digest ?? UNKNOWN_DIGEST);
  if (!c || !ok || c.revoked_at !== null) return null;
  // The directory of a suspended or deleted organization provisions nothing (docs/scim.md).
  if (c.organization_id !== null && c.organization_state !== 'active') return null;
  return {
    id: c.id,
    name: c.name,
    organization_id: c.organization_id,
    created_at: c.created_at,
    revoked_at: c.revoked_at,
  };
}
