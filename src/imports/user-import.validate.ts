// The rules of a user import document that its shape cannot state (docs/migration.md, Validation):
// identifiers, password verifiers in their source formats, TOTP seeds, organization references and
// imported audit records, each error naming the record (index and source id) and the member. A
// document passing them is turned into prepared records the plan and the apply work from.
import { decodeBase32, type OtpAlgorithm } from '../mfa/index.ts';
import type { FieldError } from '../platform/http/problem.ts';
import {
  type IdentifierType,
  type ImportedVerifier,
  identifierKey,
  isValidIdentifier,
  type ParsedVerifier,
  parseBcrypt,
  parseFirebase,
  parseKeycloak,
  parsePhc,
  strictBase64,
} from '../users/index.ts';
import type { ImportDocument, ImportPassword, ImportTotp, ImportUser } from './user-import.format.ts';

export interface PreparedIdentifier {
  type: IdentifierType;
  value: string;
  verified: boolean;
  primary: boolean;
}

export interface PreparedMembership {
  ref: { id?: string; slug?: string; externalId?: string };
  roles: string[];
  externalId: string | null;
  metadata: Record<string, unknown>;
}

export interface PreparedTotp {
  secret: Buffer;
  digits: number;
  periodSeconds: number;
  algorithm: OtpAlgorithm;
}

export interface PreparedLink {
  alias: string;
  subject: string;
  email: string | null;
}

export interface PreparedRecord {
  index: number;
  sourceId: string;
  user: ImportUser;
  identifiers: PreparedIdentifier[];
  verifier: ImportedVerifier | null;
  totp: PreparedTotp | null;
  memberships: PreparedMembership[];
  links: PreparedLink[];
  auditEvents: {
    eventType: string;
    occurredAt: Date;
    outcome: 'success' | 'failure';
    data: Record<string, unknown>;
  }[];
}

/** Where a record's errors point: `users[3].password.hash`. */
export const memberOf = (index: number, member: string) => `users[${index}]${member ? `.${member}` : ''}`;

/** Field errors whose detail says which record they are about, by index and source id. */
function recordErrors(index: number, sourceId: string) {
  const errors: FieldError[] = [];
  const add = (member: string, code: string, detail: string) =>
    errors.push({
      field: memberOf(index, member),
      code,
      detail: `record ${index} (source_id ${sourceId}): ${detail}`,
    });
  return { errors, add };
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
/** Seeds shorter than 80 bits are refused; RFC 4226 asks for 128, many deployed apps used 80. */
const MIN_SEED_BYTES = 10;
const MAX_SEED_BYTES = 128;

export type Seal = (secret: Buffer) => string;

function parsePassword(p: ImportPassword, doc: ImportDocument, seal: Seal): ParsedVerifier {
  const need = (member: 'hash' | 'salt' | 'credential_data' | 'secret_data'): ParsedVerifier => ({
    ok: false,
    error: { member, code: 'required', detail: `${p.format} needs ${member}` },
  });
  switch (p.format) {
    case 'bcrypt':
      return p.hash === undefined ? need('hash') : parseBcrypt(p.hash);
    case 'phc':
      return p.hash === undefined ? need('hash') : parsePhc(p.hash);
    case 'keycloak':
      if (p.credentialData === undefined) return need('credential_data');
      if (p.secretData === undefined) return need('secret_data');
      return parseKeycloak(p.credentialData, p.secretData);
    case 'firebase_scrypt': {
      if (p.hash === undefined) return need('hash');
      if (p.salt === undefined) return need('salt');
      const params = doc.passwordHashParameters?.firebaseScrypt;
      if (!params)
        return {
          ok: false,
          error: {
            member: 'format',
            code: 'parameters_missing',
            detail: 'password_hash_parameters.firebase_scrypt is missing',
          },
        };
      const signerKey = strictBase64(params.signerKey);
      const saltSeparator = strictBase64(params.saltSeparator);
      if (!signerKey || !saltSeparator)
        return {
          ok: false,
          error: {
            member: 'format',
            code: 'parameters_invalid',
            detail: 'the Firebase signer key or salt separator is not base64',
          },
        };
      return parseFirebase(
        p.hash,
        p.salt,
        { signerKey, saltSeparator, rounds: params.rounds, memoryCost: params.memoryCost },
        seal,
      );
    }
  }
}

function totpSecret(t: ImportTotp): Buffer | null {
  if (t.encoding === 'raw') return Buffer.from(t.secret, 'utf8');
  try {
    return decodeBase32(t.secret);
  } catch {
    return null;
  }
}

function prepareRecord(doc: ImportDocument, u: ImportUser, index: number, seal: Seal) {
  const { errors, add } = recordErrors(index, u.sourceId);
  const trust = doc.trustEmailVerification === true;
  const seenTypes = new Set<string>();
  const primaries = u.identifiers.filter((i) => i.primary === true).length;
  if (primaries > 1) add('identifiers', 'multiple_primary', 'at most one identifier is primary');
  const identifiers: PreparedIdentifier[] = u.identifiers.map((i, j) => {
    if (seenTypes.has(i.type)) add(`identifiers[${j}].type`, 'duplicate', `one ${i.type} per account`);
    seenTypes.add(i.type);
    if (!isValidIdentifier(i.type, i.value))
      add(`identifiers[${j}].value`, 'invalid', `not a valid ${i.type}`);
    // A username is chosen rather than delivered to, so it counts as verified (as for POST /users);
    // delivered addresses keep the source's flag only under trust_email_verification.
    const verified = i.type === 'username' || (trust && i.verified === true);
    return {
      type: i.type,
      value: i.value,
      verified,
      primary: primaries === 0 ? j === 0 : i.primary === true,
    };
  });

  let verifier: ImportedVerifier | null = null;
  if (u.password) {
    const parsed = parsePassword(u.password, doc, seal);
    if (parsed.ok) verifier = parsed.verifier;
    else add(`password.${parsed.error.member}`, parsed.error.code, parsed.error.detail);
  }

  let totp: PreparedTotp | null = null;
  if (u.totp) {
    const secret = totpSecret(u.totp);
    if (doc.importTotp !== true)
      add('totp', 'import_totp_required', 'TOTP seeds are carried only with import_totp');
    else if (!secret) add('totp.secret', 'invalid', 'not base32');
    else if (secret.length < MIN_SEED_BYTES || secret.length > MAX_SEED_BYTES)
      add('totp.secret', 'invalid', `the seed must be ${MIN_SEED_BYTES} to ${MAX_SEED_BYTES} bytes`);
    else
      totp = {
        secret,
        digits: u.totp.digits ?? 6,
        periodSeconds: u.totp.period ?? 30,
        algorithm: u.totp.algorithm ?? 'SHA1',
      };
  }

  const memberships: PreparedMembership[] = (u.memberships ?? []).map((m, k) => {
    const named = [m.organizationId, m.organizationSlug, m.organizationExternalId].filter(
      (x) => x !== undefined,
    );
    if (named.length !== 1)
      add(
        `memberships[${k}].organization_id`,
        named.length === 0 ? 'required' : 'conflict',
        'name the organization by exactly one of organization_id, organization_slug, organization_external_id',
      );
    return {
      ref:
        m.organizationId !== undefined
          ? { id: m.organizationId }
          : m.organizationSlug !== undefined
            ? { slug: m.organizationSlug }
            : { externalId: m.organizationExternalId ?? '' },
      roles: m.roles ?? [],
      externalId: m.externalId ?? null,
      metadata: m.metadata ?? {},
    };
  });

  const auditEvents = (u.auditEvents ?? []).flatMap((e, k) => {
    const t = Date.parse(e.occurredAt);
    if (!RFC3339.test(e.occurredAt) || Number.isNaN(t) || t < 0) {
      add(`audit_events[${k}].occurred_at`, 'invalid', 'an RFC 3339 date-time after 1970');
      return [];
    }
    return [{ eventType: e.eventType, occurredAt: new Date(t), outcome: e.outcome, data: e.data ?? {} }];
  });

  const links: PreparedLink[] = (u.linkedIdentities ?? []).map((l) => ({
    alias: l.connectionAlias,
    subject: l.upstreamSubject,
    email: l.upstreamEmail ?? null,
  }));

  return {
    errors,
    record: {
      index,
      sourceId: u.sourceId,
      user: u,
      identifiers,
      verifier,
      totp,
      memberships,
      links,
      auditEvents,
    },
  };
}

export interface PreparedDocument {
  errors: FieldError[];
  records: PreparedRecord[];
}

/**
 * Checks the document and prepares its records. `seal` protects Firebase signer keys; validation
 * alone (the request) may pass one that returns a placeholder.
 */
export function prepareDocument(doc: ImportDocument, seal: Seal): PreparedDocument {
  const errors: FieldError[] = [];
  if (doc.trustEmailVerification === true && doc.verificationReason === undefined)
    errors.push({
      field: 'verification_reason',
      code: 'required',
      detail: 'trust_email_verification needs a reason',
    });
  const records: PreparedRecord[] = [];
  const sourceIds = new Map<string, number>();
  const identifierOwners = new Map<string, number>();
  const linkOwners = new Map<string, number>();
  doc.users.forEach((u, index) => {
    const prepared = prepareRecord(doc, u, index, seal);
    errors.push(...prepared.errors);
    const first = sourceIds.get(u.sourceId);
    if (first !== undefined)
      errors.push({
        field: memberOf(index, 'source_id'),
        code: 'duplicate',
        detail: `record ${index} (source_id ${u.sourceId}): repeats record ${first}`,
      });
    else sourceIds.set(u.sourceId, index);
    prepared.record.identifiers.forEach((i, j) => {
      const key = `${i.type}:${identifierKey(i.type, i.value)}`;
      const owner = identifierOwners.get(key);
      if (owner !== undefined && owner !== index)
        errors.push({
          field: memberOf(index, `identifiers[${j}].value`),
          code: 'duplicate',
          detail: `record ${index} (source_id ${u.sourceId}): record ${owner} has the same ${i.type}`,
        });
      else identifierOwners.set(key, index);
    });
    // One upstream subject of a connection signs in one account: a second claim in the document is
    // refused with the first, as a repeated identifier is.
    prepared.record.links.forEach((l, k) => {
      const key = `${l.alias.toLowerCase()}\n${l.subject}`;
      const owner = linkOwners.get(key);
      if (owner !== undefined)
        errors.push({
          field: memberOf(index, `linked_identities[${k}].upstream_subject`),
          code: 'duplicate',
          detail: `record ${index} (source_id ${u.sourceId}): ${owner === index ? 'this record' : `record ${owner}`} links the same upstream subject of ${l.alias}`,
        });
      else linkOwners.set(key, index);
    });
    records.push(prepared.record);
  });
  return { errors, records };
}
