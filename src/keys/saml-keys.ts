// The realm's SAML signing keys (docs/saml-idp.md): an RSA key pair with a self-signed X.509
// certificate, since SAML peers take keys as certificates in metadata. The states and timings are
// those of the token signing keys (signing-key.states.ts); the private key is sealed under the
// root key like theirs, bound to its row. A realm gets its first SAML key, active at once, the
// first time a SAML feature needs one; keys.lifecycle rotates it as planned (document 2 "Key
// custody" 2: a new key is prepared and published, and activated after the prepublish period).
import { createHash, createPrivateKey, type KeyObject, webcrypto } from 'node:crypto';
// @peculiar/x509 needs the reflect polyfill loaded first (as in mfa/webauthn/cert-path.ts).
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import type { Actor } from '../audit/audit.types.ts';
import { inChange, recorder } from '../audit/index.ts';
import { type Call, SYSTEM_ACTOR, systemCall } from '../kernel/call.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Queryable, Tx } from '../platform/db/db.ts';
import { many, maybeOne } from '../platform/db/db.ts';
import { isUniqueViolation } from '../platform/db/pg-errors.ts';
import { activeNeedsSuccessor, type KeyTimings, pendingIsDue, publishUntil } from './signing-key.states.ts';
import type { SigningKeyState } from './signing-keys.repo.ts';

/** Certificates outlive any rotation interval; SAML peers do not judge IdP certificate dates anyway. */
const CERTIFICATE_YEARS = 10;

export interface SamlKeyRow {
  realm_id: string;
  kid: string;
  state: SigningKeyState;
  certificate: string;
  private_key_sealed: string;
  created_at: Date;
  activated_at: Date | null;
}

export interface SamlSigner {
  kid: string;
  /** PEM of the certificate. */
  certificate: string;
  /** PEM (PKCS#8) of the private key, as the XML signature library takes it. */
  privateKeyPem: string;
  key: KeyObject;
}

interface SamlKeyMaterial {
  kid: string;
  certificate: string;
  privatePkcs8: string;
}

const sealContext = (realmId: string, kid: string) => `saml-signing-key/${realmId}/${kid}`;

const pem = (label: string, der: ArrayBuffer) =>
  `-----BEGIN ${label}-----\n${(
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? []
  ).join('\n')}\n-----END ${label}-----\n`;

/** A fresh RSA-2048 key and its self-signed certificate; the kid is the certificate's SHA-256. */
export async function generateSamlKeyMaterial(realmName: string, now: Date): Promise<SamlKeyMaterial> {
  const alg = {
    name: 'RSASSA-PKCS1-v1_5',
    hash: 'SHA-256',
    publicExponent: new Uint8Array([1, 0, 1]),
    modulusLength: 2048,
  };
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const notAfter = new Date(now);
  notAfter.setUTCFullYear(notAfter.getUTCFullYear() + CERTIFICATE_YEARS);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: webcrypto
      .getRandomValues(new Uint8Array(16))
      .reduce((s, b) => s + b.toString(16).padStart(2, '0'), '7'),
    // The realm name is a DNS-label-like slug, safe inside a distinguished name.
    name: `CN=ProudAuth SAML ${realmName}`,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter,
    keys,
    signingAlgorithm: alg,
  });
  const der = Buffer.from(cert.rawData);
  return {
    kid: createHash('sha256').update(der).digest('base64url'),
    certificate: pem('CERTIFICATE', cert.rawData),
    privatePkcs8: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)),
  };
}

/** The certificate's base64 DER body, as ds:X509Certificate carries it. */
export const certificateBody = (certificatePem: string): string =>
  certificatePem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');

export async function insertSamlKey(
  tx: Tx,
  keyring: RootKeyring,
  realmId: string,
  m: SamlKeyMaterial,
  state: 'pending' | 'active',
  actor: Actor,
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into saml_signing_keys (realm_id, kid, state, certificate, private_key_sealed, root_key_version,
       created_at, activated_at)
     values ($1, $2, $3, $4, $5, $6, $7, case when $3 = 'active' then $7::timestamptz end)`,
    [
      realmId,
      m.kid,
      state,
      m.certificate,
      keyring.encrypt('signing-key', m.privatePkcs8, sealContext(realmId, m.kid)),
      keyring.activeVersion,
      now,
    ],
  );
  await recorder(tx, { realmId, actor, correlationId: null, now }).audit('saml_signing_key.created', {
    category: 'security',
    target: { type: 'saml_signing_key', id: m.kid },
    data: { kid: m.kid, state },
  });
}

/**
 * The realm's name when it has a SAML signing key in use (active or pending), else null: an
 * emergency rotation replaces SAML keys only where there are some (a realm gets its first on use).
 */
export const realmWithSamlKey = async (q: Queryable, realmId: string): Promise<string | null> =>
  (
    await maybeOne<{ name: string }>(
      q,
      `select r.name from saml_signing_keys k join realms r on r.id = k.realm_id
        where k.realm_id = $1 and k.state in ('active', 'pending') limit 1`,
      [realmId],
    )
  )?.name ?? null;

/**
 * The SAML half of an emergency rotation (document 2, "Keys and emergency controls"): the active
 * SAML key is compromised and leaves the metadata at once, a pending one is retired, and the new
 * key signs from now on. In the rotation's transaction; answers the compromised kid, if any.
 */
export async function replaceSamlKeyInEmergency(
  tx: Tx,
  keyring: RootKeyring,
  call: Call,
  material: SamlKeyMaterial,
): Promise<string | null> {
  const { realmId, now } = call;
  const ended = await tx.query<{ kid: string; state: string }>(
    `update saml_signing_keys
        set state = case when state = 'active' then 'compromised' else 'retired' end,
            compromised_at = case when state = 'active' then $2::timestamptz end,
            retired_at = case when state = 'pending' then $2::timestamptz end
      where realm_id = $1 and state in ('active', 'pending')
      returning kid, case when compromised_at is not null then 'compromised' else 'retired' end as state`,
    [realmId, now],
  );
  await insertSamlKey(tx, keyring, realmId, material, 'active', call.actor, now);
  const compromised = ended.rows.find((r) => r.state === 'compromised')?.kid ?? null;
  const record = recorder(tx, call);
  for (const k of ended.rows)
    await record.audit(
      k.state === 'compromised' ? 'saml_signing_key.compromised' : 'saml_signing_key.retired',
      {
        category: 'emergency',
        target: { type: 'saml_signing_key', id: k.kid },
        data: { kid: k.kid, replaced_by: material.kid },
      },
    );
  return compromised;
}

export const findActiveSamlKey = (q: Queryable, realmId: string) =>
  maybeOne<SamlKeyRow>(q, `select * from saml_signing_keys where realm_id = $1 and state = 'active'`, [
    realmId,
  ]);

/** Certificates a peer may meet: pending (prepublished), active and retiring; newest first. */
export const listPublishedSamlKeys = (q: Queryable, realmId: string) =>
  many<SamlKeyRow>(
    q,
    `select * from saml_signing_keys where realm_id = $1 and state in ('pending', 'active', 'retiring')
      order by created_at desc, kid`,
    [realmId],
  );

const unsealedByKid = new Map<string, KeyObject & { pem: string }>();

function unseal(keyring: RootKeyring, row: SamlKeyRow): SamlSigner {
  const cacheKey = `${row.realm_id}/${row.kid}`;
  let key = unsealedByKid.get(cacheKey);
  if (!key) {
    const privatePem = keyring
      .decrypt('signing-key', row.private_key_sealed, sealContext(row.realm_id, row.kid))
      .toString('utf8');
    key = Object.assign(createPrivateKey({ key: privatePem, format: 'pem' }), { pem: privatePem });
    if (unsealedByKid.size > 10_000) unsealedByKid.clear();
    unsealedByKid.set(cacheKey, key);
  }
  return { kid: row.kid, certificate: row.certificate, privateKeyPem: key.pem, key };
}

/**
 * The realm's active SAML signer; a realm without SAML key gets one, active at once. Two processes
 * racing for the first key meet on the one-active index: the loser reads the winner's key.
 */
export async function activeSamlSigner(
  db: Db,
  keyring: RootKeyring,
  realm: { id: string; name: string },
  now: Date,
): Promise<SamlSigner> {
  const row = await findActiveSamlKey(db, realm.id);
  if (row) return unseal(keyring, row);
  const material = await generateSamlKeyMaterial(realm.name, now);
  try {
    await db.tx((tx) => insertSamlKey(tx, keyring, realm.id, material, 'active', SYSTEM_ACTOR, now));
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
  }
  const created = await findActiveSamlKey(db, realm.id);
  if (!created) throw new Error('no active SAML key after creating one');
  return unseal(keyring, created);
}

/**
 * The SAML half of keys.lifecycle, with the token keys' timings: retires keys past publish_until,
 * activates a pending key after the prepublish period (the active one goes retiring), and
 * prepares a pending successor when the active key reached the rotation interval.
 */
export async function runSamlKeyLifecycle(
  deps: { db: Db; keyring: RootKeyring; timings: KeyTimings },
  now: Date,
): Promise<{ saml_retired: number; saml_activated: number; saml_rotations_started: number }> {
  const { db, keyring, timings } = deps;
  const report = { saml_retired: 0, saml_activated: 0, saml_rotations_started: 0 };
  report.saml_retired = await db.tx(async (tx) => {
    const r = await tx.query<{ realm_id: string; kid: string }>(
      `update saml_signing_keys set state = 'retired', retired_at = $1
        where state = 'retiring' and publish_until <= $1 returning realm_id, kid`,
      [now],
    );
    for (const k of r.rows)
      await recorder(tx, systemCall(k.realm_id, now)).audit('saml_signing_key.retired', {
        category: 'security',
        target: { type: 'saml_signing_key', id: k.kid },
      });
    return r.rowCount;
  });
  const rows = await many<SamlKeyRow & { realm_name: string }>(
    db,
    `select k.*, r.name as realm_name from saml_signing_keys k join realms r on r.id = k.realm_id
      where k.state in ('pending', 'active')`,
    [],
  );
  const byRealm = new Map<string, (SamlKeyRow & { realm_name: string })[]>();
  for (const k of rows) byRealm.set(k.realm_id, [...(byRealm.get(k.realm_id) ?? []), k]);
  for (const [realmId, keys] of byRealm) {
    const pending = keys.find((k) => k.state === 'pending');
    const active = keys.find((k) => k.state === 'active');
    if (pending && pendingIsDue(new Date(pending.created_at), now, timings)) {
      const done = await inChange(db, systemCall(realmId, now), async (tx, record) => {
        if (active)
          await tx.query(
            `update saml_signing_keys set state = 'retiring', retiring_at = $3, publish_until = $4
              where realm_id = $1 and kid = $2 and state = 'active'`,
            [realmId, active.kid, now, publishUntil(now, timings)],
          );
        const r = await tx.query(
          `update saml_signing_keys set state = 'active', activated_at = $3
            where realm_id = $1 and kid = $2 and state = 'pending'`,
          [realmId, pending.kid, now],
        );
        if (r.rowCount !== 1) return false;
        await record.audit('saml_signing_key.activated', {
          category: 'security',
          target: { type: 'saml_signing_key', id: pending.kid },
          data: { kid: pending.kid, previous_kid: active?.kid ?? null },
        });
        return true;
      });
      if (done) report.saml_activated++;
    } else if (
      !pending &&
      active?.activated_at &&
      activeNeedsSuccessor(new Date(active.activated_at), now, timings)
    ) {
      const material = await generateSamlKeyMaterial(active.realm_name, now);
      try {
        await db.tx((tx) => insertSamlKey(tx, keyring, realmId, material, 'pending', SYSTEM_ACTOR, now));
        report.saml_rotations_started++;
      } catch (e) {
        // Another worker prepared one first (the one-pending index); nothing of this one was written.
        if (!isUniqueViolation(e)) throw e;
      }
    }
  }
  return report;
}
