// SP-initiated SAML sign-in (docs/saml-idp.md). An AuthnRequest is checked (its SP, ACS URL,
// signature, freshness and one-time ID), kept as a SAML request state, and turned into an
// ordinary authorization request of the SP's saml client whose redirect URI is ProudAuth's own
// continuation: the login UI, MFA, step-up and SSO session reuse are those of every sign-in. The
// continuation redeems the code itself (once, bound to the state by its PKCE challenge) and
// answers the SP's ACS URL with a signed Response.
import { randomBytes } from 'node:crypto';
import {
  findSamlClientByEntityId,
  type NameIdFormat,
  type SamlSettings,
  samlContinueUrl,
} from '../clients/index.ts';
import { digestToken } from '../kernel/digest.ts';
import { s256Challenge } from '../kernel/pkce.ts';
import { activeSamlSigner, certificateBody, listPublishedSamlKeys } from '../keys/saml-keys.ts';
import { scopeClaims } from '../oauth/tokens/scope-claims.ts';
import type { Tx } from '../platform/db/db.ts';
import { maybeOne } from '../platform/db/db.ts';
import { isUniqueViolation } from '../platform/db/pg-errors.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import type { RealmRow } from '../realms/index.ts';
import { type AuthorizeOutcome, authorize } from '../signin/authorize.service.ts';
import type { SigninDeps } from '../signin/signin.deps.ts';
import { findProfileClaims } from '../users/index.ts';
import { encrypterFor } from './saml-encrypt.ts';
import { invalidPolicyAnswer, requestedFormat } from './saml-name-id-policy.ts';
import { redirectIsSigned, verifyRedirectSignature } from './saml-redirect.ts';
import { attributesFor, nameIdFor, recordParticipant, type SpRow } from './saml-subjects.ts';
import {
  AUTHN_CONTEXT,
  type AuthnRequest,
  BINDING,
  buildErrorResponse,
  buildMetadata,
  buildSignedResponse,
  isCurrentInstant,
  parseAuthnRequest,
  requestXml,
  SamlRequestError,
  verifyPostSignature,
} from './saml-xml.ts';

/** How long an assertion may be presented at the ACS. */
const ASSERTION_VALIDITY_MS = 5 * 60_000;

export const ssoUrl = (publicOrigin: string, realm: string) => `${publicOrigin}/realms/${realm}/saml/sso`;
export const idpEntityId = (publicOrigin: string, realm: string) => `${publicOrigin}/realms/${realm}`;
export const sloUrl = (publicOrigin: string, realm: string) => `${publicOrigin}/realms/${realm}/saml/slo`;

export interface SamlDeps extends SigninDeps {}

export function needKeyring(app: SamlDeps) {
  if (!app.keyring) throw problem.unavailable('no root key is configured, so SAML cannot sign');
  return app.keyring;
}

/** The realm's IdP metadata document. */
export async function idpMetadata(app: SamlDeps, realm: RealmRow): Promise<string> {
  await activeSamlSigner(app.db, needKeyring(app), realm, app.clock.now());
  const keys = await listPublishedSamlKeys(app.db, realm.id);
  const origin = app.config.server.publicOrigin;
  return buildMetadata({
    entityId: idpEntityId(origin, realm.name),
    ssoUrl: ssoUrl(origin, realm.name),
    sloUrl: sloUrl(origin, realm.name),
    certificates: keys.map((k) => certificateBody(k.certificate)),
  });
}

export interface SsoMessage {
  binding: 'redirect' | 'post';
  samlRequest: string;
  relayState: string | null;
  /** The raw query string (HTTP-Redirect signature), or null for POST. */
  rawQuery: string | null;
}

export interface AcceptedRequest {
  id: string;
  forceAuthn: boolean;
  isPassive: boolean;
}

const refuse = (detail: string) => problem.invalidRequest(detail);

/** Checks an AuthnRequest and stores its request state; the state's id starts the sign-in. */
export async function acceptAuthnRequest(
  app: SamlDeps,
  realm: RealmRow,
  m: SsoMessage,
): Promise<AcceptedRequest | PostAnswer> {
  if (m.relayState !== null && m.relayState.length > 80 * 4)
    throw refuse('RelayState is longer than SAML allows');
  let req: AuthnRequest;
  try {
    req = parseAuthnRequest(requestXml(m.samlRequest, m.binding));
  } catch (e) {
    if (e instanceof SamlRequestError) throw refuse(e.message);
    throw e;
  }
  const sp = await findSamlClientByEntityId(app.db, realm.id, req.issuer);
  if (sp?.state !== 'active') throw refuse('the Issuer is not a SAML client of this realm');
  const origin = app.config.server.publicOrigin;
  if (req.destination !== null && req.destination !== ssoUrl(origin, realm.name))
    throw refuse('the Destination is not this endpoint');
  if (req.protocolBinding !== null && req.protocolBinding !== BINDING.post)
    throw refuse('only the HTTP-POST binding answers at the ACS URL');
  const acsUrl = req.acsUrl ?? sp.settings.acsUrls[0]!;
  if (!sp.settings.acsUrls.includes(acsUrl))
    throw refuse('the ACS URL is not registered for this SAML client');
  checkSignature(sp.settings, req, m);
  const now = app.clock.now();
  if (!isCurrentInstant(req.issueInstant, now)) throw refuse('the IssueInstant is not current');

  const nameIdFormat = requestedFormat(req.nameIdFormat, sp.settings);
  let id: string;
  try {
    id = await insertRequestState(app, realm, {
      clientId: sp.clientId,
      requestId: req.id,
      acsUrl,
      relayState: m.relayState,
      nameIdFormat: nameIdFormat === 'refused' ? null : nameIdFormat,
      consumed: nameIdFormat === 'refused',
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw refuse('this AuthnRequest ID was already used');
    throw e;
  }
  if (nameIdFormat === 'refused') {
    const issuer = idpEntityId(origin, realm.name);
    const deps = { db: app.db, keyring: needKeyring(app), now };
    return invalidPolicyAnswer(deps, realm, { issuer, acsUrl, requestId: req.id, relayState: m.relayState });
  }
  return { id, forceAuthn: req.forceAuthn, isPassive: req.isPassive };
}

/** A new SAML request state; a repeated request ID of the client breaks a unique index. */
async function insertRequestState(
  app: SamlDeps,
  realm: RealmRow,
  r: {
    clientId: string;
    requestId: string | null;
    acsUrl: string;
    relayState: string | null;
    nameIdFormat?: NameIdFormat | null;
    /** Answered already (a refused NameIDPolicy): kept only so its ID is not used again. */
    consumed?: boolean;
  },
): Promise<string> {
  const now = app.clock.now();
  const id = newId('srq', now.getTime());
  await app.db.query(
    `insert into saml_idp_requests (realm_id, id, client_id, request_id, acs_url, relay_state, code_challenge,
       expires_at, created_at, name_id_format, consumed_at) values ($1, $2, $3, $4, $5, $6, '', $7, $8, $9, $10)`,
    [
      realm.id,
      id,
      r.clientId,
      r.requestId,
      r.acsUrl,
      r.relayState,
      new Date(now.getTime() + app.config.tokens.transactionTtlMs),
      now,
      r.nameIdFormat ?? null,
      r.consumed ? now : null,
    ],
  );
  return id;
}

/**
 * IdP-initiated sign-in (an unsolicited Response): a request state without a request ID for a
 * SAML client named by client_id, answered at its first ACS URL.
 */
export async function acceptIdpInitiated(
  app: SamlDeps,
  realm: RealmRow,
  clientId: string,
  relayState: string | null,
): Promise<AcceptedRequest> {
  if (relayState !== null && relayState.length > 80 * 4)
    throw refuse('RelayState is longer than SAML allows');
  const sp = await maybeOne<{ acs_urls: string[] }>(
    app.db,
    `select s.acs_urls from saml_clients s join clients c on c.realm_id = s.realm_id and c.id = s.client_row_id
      where s.realm_id = $1 and c.client_id = $2 and c.state = 'active'`,
    [realm.id, clientId],
  );
  if (!sp?.acs_urls[0]) throw refuse('client_id is not an active SAML client of this realm');
  const id = await insertRequestState(app, realm, {
    clientId,
    requestId: null,
    acsUrl: sp.acs_urls[0],
    relayState,
  });
  return { id, forceAuthn: false, isPassive: false };
}

function checkSignature(s: SamlSettings, req: AuthnRequest, m: SsoMessage): void {
  if (s.signingCertificate === null) return;
  const ok =
    m.binding === 'redirect'
      ? m.rawQuery !== null &&
        redirectIsSigned(m.rawQuery) &&
        verifyRedirectSignature(m.rawQuery, s.signingCertificate)
      : verifyPostSignature(req, s.signingCertificate);
  if (!ok) throw refuse('the AuthnRequest is not signed with the registered certificate');
}

/**
 * Starts the sign-in of a request state, once: an authorization request of the SP's client to the
 * continuation, with this state and a PKCE challenge whose verifier nobody needs (the code is
 * redeemed here, bound to the state by the challenge).
 */
export async function startSamlSignin(
  app: SamlDeps,
  q: Tx,
  realm: RealmRow,
  stateId: string,
  opts: { forceAuthn: boolean; isPassive: boolean; userAgent: string | null },
  sid: string | null,
  correlationId: string,
): Promise<AuthorizeOutcome> {
  const row = await maybeOne<{ client_id: string }>(
    q,
    `select client_id from saml_idp_requests where realm_id = $1 and id = $2 and started_at is null
       and consumed_at is null and expires_at > $3 for update`,
    [realm.id, stateId, app.clock.now()],
  );
  if (!row) throw refuse('the SAML request is unknown, ended, or already started');
  const challenge = s256Challenge(randomBytes(32).toString('base64url'));
  await q.query(
    'update saml_idp_requests set started_at = $3, code_challenge = $4 where realm_id = $1 and id = $2',
    [realm.id, stateId, app.clock.now(), challenge],
  );
  return authorize(
    app,
    q,
    realm,
    {
      clientId: row.client_id,
      redirectUri: samlContinueUrl(app.config.server.publicOrigin),
      responseType: 'code',
      scope: 'openid',
      state: stateId,
      codeChallenge: challenge,
      codeChallengeMethod: 'S256',
      ...(opts.isPassive ? { prompt: 'none' } : opts.forceAuthn ? { prompt: 'login' } : {}),
      ...(opts.userAgent ? { userAgent: opts.userAgent } : {}),
    },
    sid,
    correlationId,
  );
}

export interface PostAnswer {
  acsUrl: string;
  samlResponse: string;
  relayState: string | null;
}

interface RequestRow {
  realm_id: string;
  id: string;
  client_id: string;
  request_id: string | null;
  acs_url: string;
  relay_state: string | null;
  code_challenge: string;
  name_id_format: string | null;
}

interface CodeRow {
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  user_id: string;
  session_id: string;
  auth_time: Date;
  acr: string;
  org_id: string | null;
  consumed_at: Date | null;
  expires_at: Date;
}

/**
 * The continuation: ends the request state (once) and answers the SP with a signed Response
 * built from the code the sign-in issued, or with a failure status when the sign-in failed.
 */
export async function continueSamlSignin(app: SamlDeps, params: URLSearchParams): Promise<PostAnswer> {
  const stateId = params.get('state');
  if (!stateId || !/^srq_[0-9a-z]{26}$/.test(stateId)) throw refuse('no SAML request state');
  const keyring = needKeyring(app);
  const now = app.clock.now();
  const answer = await app.db.tx(async (tx) => {
    const req = await maybeOne<RequestRow & { realm_name: string }>(
      tx,
      `update saml_idp_requests s set consumed_at = $2 from realms r
        where s.id = $1 and r.id = s.realm_id and s.consumed_at is null and s.started_at is not null
          and s.expires_at > $2
        returning s.*, r.name as realm_name`,
      [stateId, now],
    );
    if (!req) throw refuse('the SAML request is unknown, ended, or already answered');
    const realm = { id: req.realm_id, name: req.realm_name };
    const origin = app.config.server.publicOrigin;
    const issuer = idpEntityId(origin, realm.name);
    if (params.get('iss') !== issuer) throw refuse('the sign-in answered for another realm');
    const sp = await maybeOne<SpRow>(
      tx,
      `select s.entity_id, s.name_id_format, s.attributes, s.groups_attribute, s.roles_attribute,
         s.encryption_certificate from saml_clients s
         join clients c on c.realm_id = s.realm_id and c.id = s.client_row_id
        where s.realm_id = $1 and c.client_id = $2 and c.state = 'active'`,
      [realm.id, req.client_id],
    );
    if (!sp) throw refuse('the SAML client is gone or disabled');
    const error = params.get('error');
    const code = params.get('code');
    if (error !== null || code === null) {
      const passive = error === 'login_required' || error === 'interaction_required';
      return { req, realm, issuer, failure: passive ? 'NoPassive' : 'AuthnFailed' } as const;
    }
    const row = await maybeOne<CodeRow>(
      tx,
      `update authorization_codes set consumed_at = $3
        where realm_id = $1 and code_digest = $2 and consumed_at is null
        returning client_id, redirect_uri, code_challenge, user_id, session_id, auth_time, acr, org_id,
          consumed_at, expires_at`,
      [realm.id, digestToken(code), now],
    );
    if (
      !row ||
      row.client_id !== req.client_id ||
      row.redirect_uri !== samlContinueUrl(origin) ||
      row.code_challenge !== req.code_challenge ||
      new Date(row.expires_at).getTime() <= now.getTime()
    )
      throw refuse('the sign-in result does not belong to this SAML request');
    const user = await findProfileClaims(tx, realm.id, row.user_id);
    if (!user) throw refuse('the account is gone');
    const claims = scopeClaims(['profile', 'email'], user);
    const format = req.name_id_format ?? sp.name_id_format;
    const nameId = await nameIdFor(tx, realm.id, req.client_id, row.user_id, format, claims);
    if (!nameId) return { req, realm, issuer, failure: 'InvalidNameIDPolicy' } as const;
    await recordParticipant(tx, realm.id, row.session_id, req.client_id, row.user_id, nameId, now);
    const attributes = await attributesFor(tx, realm.id, row, sp, claims, now);
    return {
      req,
      realm,
      issuer,
      audience: sp.entity_id,
      encrypt: encrypterFor(sp.encryption_certificate),
      nameId,
      sessionIndex: row.session_id,
      authnInstant: new Date(row.auth_time),
      authnContext: row.acr === 'basic' ? AUTHN_CONTEXT.password : AUTHN_CONTEXT.mfa,
      attributes,
    } as const;
  });
  const signer = await activeSamlSigner(app.db, keyring, answer.realm, now);
  const base = {
    issuer: answer.issuer,
    destination: answer.req.acs_url,
    inResponseTo: answer.req.request_id,
    now,
    signer,
  };
  const xml =
    'failure' in answer
      ? buildErrorResponse({
          ...base,
          status: 'urn:oasis:names:tc:SAML:2.0:status:Responder',
          subStatus: `urn:oasis:names:tc:SAML:2.0:status:${answer.failure}`,
        })
      : await buildSignedResponse({
          ...base,
          audience: answer.audience,
          nameId: answer.nameId,
          sessionIndex: answer.sessionIndex,
          authnInstant: answer.authnInstant,
          authnContext: answer.authnContext,
          attributes: answer.attributes,
          validityMs: ASSERTION_VALIDITY_MS,
          ...(answer.encrypt ? { encrypt: answer.encrypt } : {}),
        });
  return {
    acsUrl: answer.req.acs_url,
    samlResponse: Buffer.from(xml, 'utf8').toString('base64'),
    relayState: answer.req.relay_state,
  };
}
