// Passkey use cases shared by the sign-in transaction and /me: where trust comes from, storing a
// registered passkey, and the passkey as the API shows it.
import type { Db, Queryable, Tx } from '../../platform/db/db.ts';
import { type FieldError, Problem } from '../../platform/http/problem.ts';
import { newId } from '../../platform/ids.ts';
import { currentPolicy, type RealmPolicy } from '../../realms/index.ts';
import { factorAllowed } from '../factor-rules.ts';
import { enrolledFactors } from '../factors.repo.ts';
import { replaceRecoveryCodes } from '../mfa.repo.ts';
import { generateRecoveryCodes } from '../recovery-codes.ts';
import type { FidoMetadata } from './fido-metadata.ts';
import {
  countTrustedAuthenticators,
  findTrustedAuthenticator,
  insertPasskey,
  type PasskeyRow,
} from './passkeys.repo.ts';
import {
  checkRegistration,
  type RegisteredPasskey,
  type RegistrationExpected,
  type RegistrationRefusal,
  type TrustSources,
} from './registration.ts';
import { webauthnPolicy } from './webauthn-policy.ts';

export async function trustSources(
  q: Queryable,
  realmId: string,
  metadata: FidoMetadata | null,
): Promise<TrustSources> {
  const operator = metadata ? await metadata.trust() : { entries: new Map(), exists: false };
  return {
    realmRoots: async (aaguid) =>
      (await findTrustedAuthenticator(q, realmId, aaguid))?.root_certificates ?? null,
    realmHasAny: async () => (await countTrustedAuthenticators(q, realmId)) > 0,
    operator: operator.entries,
    operatorExists: operator.exists,
  };
}

/**
 * The answer to a pending registration ceremony, checked against the realm's passkey policy and
 * trust sources. A refusal is audited through `auditRefusal` (its own transaction) and thrown as
 * the problem the caller sees; both the sign-in step and /me register this way.
 */
export async function verifyRegistrationAnswer(
  deps: { db: Db; fidoMetadata: FidoMetadata | null; publicOrigin: string },
  realmId: string,
  ceremony: { challenge: string; expected: RegistrationExpected },
  credential: unknown,
  now: Date,
  auditRefusal: (q: Tx, refusal: RegistrationRefusal) => Promise<unknown>,
): Promise<RegisteredPasskey> {
  const policy = webauthnPolicy(await currentPolicy(deps.db, realmId), deps.publicOrigin);
  const trust = await trustSources(deps.db, realmId, deps.fidoMetadata);
  const check = await checkRegistration(
    credential,
    ceremony.challenge,
    ceremony.expected,
    policy,
    trust,
    now,
  );
  if (check.ok) return check.passkey;
  await deps.db.tx((q) => auditRefusal(q, check.refusal));
  throw registrationProblem(check.refusal, check.detail);
}

/** A default name users can recognise and rename later. */
export const defaultPasskeyName = (now: Date) => `Passkey ${now.toISOString().slice(0, 10)}`;

export async function storePasskey(
  q: Tx,
  realmId: string,
  userId: string,
  p: RegisteredPasskey,
  name: string,
  now: Date,
): Promise<string> {
  const id = newId('pkc', now.getTime());
  await insertPasskey(
    q,
    realmId,
    {
      id,
      user_id: userId,
      credential_id: p.credentialId,
      public_key: p.publicKey,
      signCount: p.counter,
      transports: p.transports,
      aaguid: p.aaguid,
      backup_eligible: p.backupEligible,
      backup_state: p.backupState,
      user_verified: p.userVerified,
      attestation_format: p.format,
      attestation_trusted: p.attestationTrusted,
      attestation_source: p.attestationSource,
      credential_protection: p.credentialProtection,
      name,
    },
    now,
  );
  return id;
}

/**
 * A checked registration stored for the account, with recovery codes issued when it had none
 * (shown once by the caller) while the realm allows them, as TOTP and HOTP activation do.
 */
export async function enrollPasskey(
  q: Tx,
  realmId: string,
  userId: string,
  p: RegisteredPasskey,
  name: string,
  now: Date,
  policy: RealmPolicy,
): Promise<{ id: string; codes: string[] | null }> {
  const id = await storePasskey(q, realmId, userId, p, name, now);
  // Not while the realm leaves recovery codes out of mfa.allowed_factors.
  const issue =
    factorAllowed(policy, 'recovery_code') && !(await enrolledFactors(q, realmId, userId)).recoveryCodes;
  const codes = issue ? generateRecoveryCodes() : null;
  if (codes) await replaceRecoveryCodes(q, realmId, userId, codes, now);
  return { id, codes };
}

/** The problem a refused registration answers (spec doc 1, Errors 422 and feature_disabled). */
export function registrationProblem(refusal: RegistrationRefusal, detail: string): Problem {
  if (refusal === 'feature_disabled') return new Problem(409, 'feature_disabled', detail);
  const errors: FieldError[] = [{ field: 'credential', code: refusal, detail }];
  return new Problem(422, 'validation_failed', 'the passkey was not accepted', { errors });
}

export function presentPasskey(p: PasskeyRow): Record<string, unknown> {
  return {
    id: p.id,
    name: p.name,
    credential_id: p.credential_id,
    aaguid: p.aaguid,
    transports: p.transports,
    sign_count: Number(p.sign_count),
    backup_eligible: p.backup_eligible,
    backup_state: p.backup_state,
    user_verified: p.user_verified,
    attestation_format: p.attestation_format,
    attestation_trusted: p.attestation_trusted,
    attestation_source: p.attestation_source,
    credential_protection: p.credential_protection,
    created_at: new Date(p.created_at).toISOString(),
    last_used_at: p.last_used_at ? new Date(p.last_used_at).toISOString() : null,
  };
}
