// Use cases of identity-provider connections (docs/federation.md, Connections): create, read,
// change and delete, each with its audit record in one transaction. A connection belongs to the
// realm or to one organization; the organization routes see only that organization's. The client
// secret is sealed under the root key or kept as a key reference, and never leaves (doc 2, Data
// lifecycle 5; Key custody 2).
import { inChange, type Recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Environment } from '../platform/config/settings.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { isUniqueViolation } from '../platform/db/pg-errors.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import type { Delegator } from '../roles/delegator.ts';
import { findLiveOrganization } from '../roles/index.ts';
import { type ConnectionRow, type ConnectionState, providerSecretAad } from './connection.ts';
import { checkJitRole, definitionProblems, kindFor } from './connection-rules.ts';
import type { ConnectionInput, ConnectionPatch, SecretInput } from './connections.decode.ts';
import {
  deleteConnection,
  findConnection,
  insertConnection,
  listConnections,
  lockConnection,
  setConnectionState,
  updateConnection,
} from './connections.repo.ts';
import { countLinksOfConnection } from './linked-identities.repo.ts';
import { PRESETS } from './presets.ts';
import { type IdpMetadata, parseIdpMetadata } from './saml-idp-metadata.ts';
import { newSpKeyPair } from './saml-sp-keys.ts';

export interface ConnectionDeps {
  db: Db;
  keyring: RootKeyring | null;
  environment: Environment;
  /** SAML: the IdP metadata at a URL, fetched through the egress guard; throws when unreachable. */
  fetchSamlMetadata?: (url: string) => Promise<string>;
}

/**
 * SAML: the IdP metadata the request names (uploaded XML first, else config.metadata_url), read
 * before any transaction opens; null when it names none.
 */
async function readMetadata(
  deps: ConnectionDeps,
  xml: string | null | undefined,
  url: string | undefined,
): Promise<IdpMetadata | null> {
  let text = xml ?? null;
  let field = 'idp_metadata_xml';
  if (text === null && url !== undefined) {
    field = 'config.metadata_url';
    if (!deps.fetchSamlMetadata) throw problem.unavailable('IdP metadata cannot be fetched here');
    try {
      text = await deps.fetchSamlMetadata(url);
    } catch {
      throw problem.validation([{ field, code: 'unreachable', detail: 'the metadata could not be fetched' }]);
    }
  }
  if (text === null) return null;
  const parsed = parseIdpMetadata(text);
  if (typeof parsed === 'string') throw problem.validation([{ field, code: 'invalid', detail: parsed }]);
  return parsed;
}

/** What the metadata says, under what the request names itself. */
const withMetadata = (config: ConnectionRow['config'], m: IdpMetadata | null): ConnectionRow['config'] =>
  m
    ? {
        ...config,
        sso_url: config.sso_url ?? m.ssoUrl,
        idp_certificates: config.idp_certificates ?? m.certificates,
      }
    : config;

const noSamlSecret = () =>
  problem.validation([
    {
      field: 'client_secret',
      code: 'not_allowed',
      detail: 'a SAML connection makes its own key pair; it takes no client secret',
    },
  ]);

/** Where a request acts: the whole realm, or one organization (its administrators' routes). */
export type ConnectionScope = { kind: 'realm' } | { kind: 'organization'; organizationId: string };

export interface ConnectionCall extends Call {
  caller: Delegator;
}

const etagOf = (version: number) => `"${version}"`;

export { etagOf as connectionEtag };

export function ifMatchSatisfied(header: string | undefined, version: number): boolean {
  if (header === undefined) return true;
  const value = header.trim();
  return value === '*' || value.split(',').some((t) => t.trim().replace(/^W\//, '') === etagOf(version));
}

function sealSecret(deps: ConnectionDeps, realmId: string, id: string, s: SecretInput) {
  if (s.kind === 'reference') return { clientSecretSealed: null, clientSecretRef: s.ref };
  if (!deps.keyring) throw problem.unavailable('no root key is configured to seal provider secrets');
  return {
    clientSecretSealed: deps.keyring.encrypt('provider-secret', s.value, providerSecretAad(realmId, id)),
    clientSecretRef: null,
  };
}

const inScope = (row: ConnectionRow | null, scope: ConnectionScope): row is ConnectionRow =>
  row !== null && (scope.kind === 'realm' || row.organization_id === scope.organizationId);

async function requireConnection(
  q: Tx | Db,
  realmId: string,
  scope: ConnectionScope,
  id: string,
  lock = false,
): Promise<ConnectionRow> {
  const row = id.includes('\0')
    ? null
    : lock
      ? await lockConnection(q as Tx, realmId, id)
      : await findConnection(q, realmId, id);
  if (!inScope(row, scope)) throw problem.notFound('no such identity provider');
  return row;
}

const audited = (
  record: Recorder,
  type: 'identity_provider.created' | 'identity_provider.updated' | 'identity_provider.deleted',
  row: ConnectionRow,
  data: Record<string, unknown>,
) =>
  record.audit(type, {
    category: 'configuration',
    signal: 'configuration_change',
    target: { type: 'identity_provider', id: row.id },
    ...(row.organization_id ? { orgId: row.organization_id } : {}),
    data: { alias: row.alias, ...data },
  });

export async function createConnection(
  deps: ConnectionDeps,
  call: ConnectionCall,
  scope: ConnectionScope,
  input: ConnectionInput,
): Promise<ConnectionRow> {
  const kind = kindFor(input.adapter, input.kind);
  if (typeof kind !== 'string') throw problem.validation([kind]);
  if (kind !== 'saml' && input.metadataXml !== null)
    throw problem.validation([
      { field: 'idp_metadata_xml', code: 'not_allowed', detail: 'SAML connections only' },
    ]);
  if (kind === 'saml' && input.secret !== null) throw noSamlSecret();
  const metadata =
    kind === 'saml' ? await readMetadata(deps, input.metadataXml, input.config.metadata_url) : null;
  input = { ...input, config: withMetadata(input.config, metadata) };
  const issuer = input.issuer ?? metadata?.entityId ?? PRESETS[input.adapter].issuer;
  if (!issuer)
    throw problem.validation([
      { field: 'issuer', code: 'required', detail: 'the generic adapter names its issuer' },
    ]);
  const organizationId = scope.kind === 'organization' ? scope.organizationId : input.organizationId;
  if (
    scope.kind === 'organization' &&
    input.organizationId !== null &&
    input.organizationId !== organizationId
  )
    throw problem.validation([
      { field: 'organization_id', code: 'not_allowed', detail: 'the organization of the path' },
    ]);
  const problems = definitionProblems(
    { adapter: input.adapter, kind, issuer, config: input.config, hasSecret: input.secret !== null },
    deps.environment,
  );
  if (problems.length > 0) throw problem.validation(problems);
  const id = newId('idp', call.now.getTime());
  // SAML: the connection's own SP key pair; the private key sealed like a client secret.
  const sp = kind === 'saml' ? await newSpKeyPair(`ProudAuth ${input.alias}`, call.now) : null;
  const secret = sp
    ? sealSecret(deps, call.realmId, id, { kind: 'sealed', value: sp.privateKeyPem })
    : input.secret
      ? sealSecret(deps, call.realmId, id, input.secret)
      : { clientSecretSealed: null, clientSecretRef: null };
  return inChange(deps.db, call, async (tx, record) => {
    if (organizationId !== null && !(await findLiveOrganization(tx, call.realmId, organizationId)))
      throw problem.validation([
        { field: 'organization_id', code: 'not_found', detail: 'no such organization' },
      ]);
    if (input.jitDefaultRoleId)
      await checkJitRole(tx, call.realmId, input.jitDefaultRoleId, organizationId, call.caller, call.now);
    let row: ConnectionRow;
    try {
      row = await insertConnection(
        tx,
        call.realmId,
        {
          id,
          organizationId,
          alias: input.alias,
          displayName: input.displayName,
          kind,
          adapter: input.adapter,
          state: input.state,
          issuer,
          config: input.config,
          linkingPolicy: input.linkingPolicy,
          jitProvisioning: input.jitProvisioning,
          jitDefaultRoleId: input.jitDefaultRoleId,
          trustUpstreamMfa: input.trustUpstreamMfa,
          claimMapping: input.claimMapping,
          ...secret,
          ownerUserId: call.actor.type === 'user' ? call.actor.id : null,
          spCertificate: sp?.certificatePem ?? null,
        },
        call.now,
      );
    } catch (e) {
      if (isUniqueViolation(e))
        throw problem.conflict('another identity provider of the realm has this alias');
      throw e;
    }
    await audited(record, 'identity_provider.created', row, { kind, adapter: row.adapter, issuer });
    return row;
  });
}

export async function getConnection(
  deps: ConnectionDeps,
  realmId: string,
  scope: ConnectionScope,
  id: string,
): Promise<ConnectionRow> {
  return requireConnection(deps.db, realmId, scope, id);
}

export async function listConnectionPage(
  deps: ConnectionDeps,
  realmId: string,
  scope: ConnectionScope,
  after: string | null,
  limit: number,
): Promise<{ items: ConnectionRow[]; nextAfter: string | null }> {
  const rows = await listConnections(deps.db, realmId, {
    ...(scope.kind === 'organization' ? { organizationId: scope.organizationId } : {}),
    after,
    limit: limit + 1,
  });
  const items = rows.slice(0, limit);
  return { items, nextAfter: rows.length > limit ? (items.at(-1)?.id ?? null) : null };
}

export async function patchConnection(
  deps: ConnectionDeps,
  call: ConnectionCall,
  scope: ConnectionScope,
  id: string,
  patch: ConnectionPatch,
  ifMatch: string | undefined,
): Promise<ConnectionRow> {
  // Metadata is read before the transaction (it may need the network); the kind is checked below.
  const metadata = await readMetadata(deps, patch.metadataXml, patch.config?.metadata_url);
  return inChange(deps.db, call, async (tx, record) => {
    const before = await requireConnection(tx, call.realmId, scope, id, true);
    if (!ifMatchSatisfied(ifMatch, before.version)) throw problem.preconditionFailed();
    if (before.kind === 'saml' && patch.secret) throw noSamlSecret();
    if (before.kind !== 'saml' && metadata)
      throw problem.validation([
        { field: 'idp_metadata_xml', code: 'not_allowed', detail: 'SAML connections only' },
      ]);
    const issuer = patch.issuer ?? metadata?.entityId ?? before.issuer;
    // Links name the issuer they were made under; moving them is a federation transfer's job.
    if (issuer !== before.issuer && (await countLinksOfConnection(tx, call.realmId, id)) > 0)
      throw problem.conflict('identities are linked through this connection; its issuer cannot change');
    // Fresh metadata replaces what the older metadata said, under what the patch names itself.
    const config = metadata
      ? withMetadata(
          {
            ...(patch.config ?? before.config),
            sso_url: patch.config?.sso_url,
            idp_certificates: patch.config?.idp_certificates,
          },
          metadata,
        )
      : (patch.config ?? before.config);
    const secret = patch.secret
      ? sealSecret(deps, call.realmId, id, patch.secret)
      : { clientSecretSealed: before.client_secret_sealed, clientSecretRef: before.client_secret_ref };
    const problems = definitionProblems(
      {
        adapter: before.adapter,
        kind: before.kind,
        issuer,
        config,
        hasSecret: secret.clientSecretSealed !== null || secret.clientSecretRef !== null,
      },
      deps.environment,
    );
    if (problems.length > 0) throw problem.validation(problems);
    const jitRole =
      patch.jitDefaultRoleId === undefined ? before.jit_default_role_id : patch.jitDefaultRoleId;
    if (patch.jitDefaultRoleId)
      await checkJitRole(
        tx,
        call.realmId,
        patch.jitDefaultRoleId,
        before.organization_id,
        call.caller,
        call.now,
      );
    const row = await updateConnection(
      tx,
      call.realmId,
      id,
      {
        displayName: patch.displayName ?? before.display_name,
        state: patch.state ?? before.state,
        issuer,
        config,
        linkingPolicy: patch.linkingPolicy ?? before.linking_policy,
        jitProvisioning: patch.jitProvisioning ?? before.jit_provisioning,
        jitDefaultRoleId: jitRole,
        trustUpstreamMfa: patch.trustUpstreamMfa ?? before.trust_upstream_mfa,
        claimMapping: patch.claimMapping ?? before.claim_mapping,
        ...secret,
      },
      call.now,
    );
    await audited(record, 'identity_provider.updated', row, {
      changed: Object.keys(patch).map((k) =>
        k === 'secret' ? 'client_secret' : k === 'metadataXml' ? 'idp_metadata_xml' : k,
      ),
    });
    return row;
  });
}

/** Refused while identities are linked: they move with a federation transfer or are removed first. */
export async function removeConnection(
  deps: ConnectionDeps,
  call: Call,
  scope: ConnectionScope,
  id: string,
  ifMatch: string | undefined,
): Promise<void> {
  await inChange(deps.db, call, async (tx, record) => {
    const before = await requireConnection(tx, call.realmId, scope, id, true);
    if (!ifMatchSatisfied(ifMatch, before.version)) throw problem.preconditionFailed();
    if ((await countLinksOfConnection(tx, call.realmId, id)) > 0)
      throw problem.conflict('identities are linked through this connection; move or remove them first');
    await tx.query('delete from federation_requests where realm_id = $1 and provider_id = $2', [
      call.realmId,
      id,
    ]);
    await tx.query('delete from signin_federation where realm_id = $1 and provider_id = $2', [
      call.realmId,
      id,
    ]);
    await deleteConnection(tx, call.realmId, id);
    await audited(record, 'identity_provider.deleted', before, {});
  });
}

/**
 * The emergency control's disable and enable (doc 2, Keys and emergency controls): the same state
 * change PATCH makes, in the caller's transaction. Returns the state before.
 */
export async function setConnectionStateInTx(
  tx: Tx,
  record: Recorder,
  call: Call,
  id: string,
  state: ConnectionState,
): Promise<ConnectionState> {
  const before = id.includes('\0') ? null : await lockConnection(tx, call.realmId, id);
  if (!before) throw problem.notFound('no such identity provider');
  if (before.state !== state) {
    await setConnectionState(tx, call.realmId, id, state, call.now);
    await audited(record, 'identity_provider.updated', before, { changed: ['state'], state });
  }
  return before.state;
}
