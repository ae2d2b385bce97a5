// Single logout at the identity provider (SAML Profiles 4.4; docs/saml-idp.md, Single logout).
// An SP's LogoutRequest (HTTP-Redirect, signed with its registered certificate) ends the SSO
// sessions it names and is answered with a signed LogoutResponse; the other SPs those sessions
// signed in to are sent LogoutRequests through the browser (front channel). A logout at
// ProudAuth itself sends the same LogoutRequests (samlLogoutUrls).

import { findSamlClientByEntityId } from '../clients/index.ts';
import { digestToken } from '../kernel/digest.ts';
import { activeSamlSigner } from '../keys/saml-keys.ts';
import { endLoggedOutSession } from '../oauth/logout-session.ts';
import type { Tx } from '../platform/db/db.ts';
import { many } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import type { RealmRow } from '../realms/index.ts';
import { findLiveSessionByCookie } from '../sessions/index.ts';
import {
  buildLogoutRequest,
  buildLogoutResponse,
  type LogoutRequest,
  parseLogoutRequest,
  parseLogoutResponse,
  STATUS_SUCCESS,
} from './saml-logout-xml.ts';
import { type RedirectMessage, signedRedirectUrl, verifyRedirectSignature } from './saml-redirect.ts';
import { idpEntityId, needKeyring, type SamlDeps, sloUrl } from './saml-sso.service.ts';
import { isCurrentInstant, requestXml, SamlRequestError } from './saml-xml.ts';

/** How long the LogoutRequests ProudAuth sends may be acted on; how long a request ID is kept. */
const SENT_VALIDITY_MS = 5 * 60_000;

const refuse = (detail: string) => problem.invalidRequest(detail);

function read<T>(parse: (xml: string) => T, encoded: string): T {
  try {
    return parse(requestXml(encoded, 'redirect'));
  } catch (e) {
    if (e instanceof SamlRequestError) throw refuse(e.message);
    throw e;
  }
}

/** The SP that sent a message, active, with an SLO URL, and whose signature over the query holds. */
async function sendingSp(
  app: SamlDeps,
  realm: RealmRow,
  issuer: string,
  rawQuery: string,
  message: RedirectMessage,
) {
  const sp = await findSamlClientByEntityId(app.db, realm.id, issuer);
  if (sp?.state !== 'active') throw refuse('the Issuer is not a SAML client of this realm');
  const { sloUrl: spSlo, signingCertificate } = sp.settings;
  if (spSlo === null) throw refuse('the SAML client has no single logout URL');
  // An unsigned logout message could be sent by any page the browser visits.
  if (signingCertificate === null)
    throw refuse('single logout needs the SAML client\u2019s signing certificate');
  if (!verifyRedirectSignature(rawQuery, signingCertificate, message))
    throw refuse(`the ${message} is not signed with the registered certificate`);
  return { clientId: sp.clientId, sloUrl: spSlo };
}

function checkTimes(app: SamlDeps, realm: RealmRow, req: LogoutRequest): void {
  if (req.destination !== null && req.destination !== sloUrl(app.config.server.publicOrigin, realm.name))
    throw refuse('the Destination is not this endpoint');
  const now = app.clock.now();
  if (!isCurrentInstant(req.issueInstant, now)) throw refuse('the IssueInstant is not current');
  if (req.notOnOrAfter !== null && req.notOnOrAfter.getTime() <= now.getTime())
    throw refuse('the LogoutRequest has expired');
}

export interface LogoutAnswer {
  /** The signed LogoutResponse to the requesting SP. */
  responseUrl: string;
  /** Signed LogoutRequests to the other SPs of the ended sessions. */
  frontChannel: string[];
  /** Whether the browser's own session was among those ended (its cookie is cleared). */
  endedBrowserSession: boolean;
}

/** An SP's LogoutRequest: checked, its sessions ended with their audit records, one transaction. */
export async function acceptLogoutRequest(
  app: SamlDeps,
  realm: RealmRow,
  m: { samlRequest: string; relayState: string | null; rawQuery: string },
  cookie: string | null,
  correlationId: string,
): Promise<LogoutAnswer> {
  if (m.relayState !== null && m.relayState.length > 80 * 4)
    throw refuse('RelayState is longer than SAML allows');
  const req = read(parseLogoutRequest, m.samlRequest);
  const sp = await sendingSp(app, realm, req.issuer, m.rawQuery, 'SAMLRequest');
  checkTimes(app, realm, req);
  const now = app.clock.now();
  const expires = new Date(now.getTime() + SENT_VALIDITY_MS);
  const { ended, browser } = await app.db.tx(async (tx) => {
    // The request ID is used once, like an AuthnRequest's: kept as an answered request state.
    const fresh = await tx.query(
      `insert into saml_idp_requests (realm_id, id, client_id, request_id, acs_url, code_challenge, started_at,
         expires_at, consumed_at, created_at) values ($1, $2, $3, $4, $5, '', $6, $7, $6, $6)
       on conflict (realm_id, client_id, request_id) where request_id is not null do nothing`,
      [realm.id, newId('srq', now.getTime()), sp.clientId, req.id, sp.sloUrl, now, expires],
    );
    if (fresh.rowCount !== 1) throw refuse('this LogoutRequest ID was already used');
    const named = await many<{ session_id: string; user_id: string }>(
      tx,
      `select p.session_id, p.user_id from saml_session_participants p
         join sessions s on s.realm_id = p.realm_id and s.id = p.session_id
        where p.realm_id = $1 and p.client_id = $2 and p.name_id = $3 and s.revoked_at is null
          and (cardinality($4::text[]) = 0 or p.session_id = any($4::text[]))`,
      [realm.id, sp.clientId, req.nameId, req.sessionIndexes],
    );
    const fromCookie = cookie ? await findLiveSessionByCookie(tx, realm.id, digestToken(cookie), now) : null;
    const ids = await endSessions(tx, realm, named, sp.clientId, now, correlationId);
    return { ended: ids, browser: fromCookie !== null && ids.includes(fromCookie.id) };
  });
  const origin = app.config.server.publicOrigin;
  const signer = await activeSamlSigner(app.db, needKeyring(app), realm, now);
  const xml = buildLogoutResponse({
    issuer: idpEntityId(origin, realm.name),
    destination: sp.sloUrl,
    now,
    inResponseTo: req.id,
    status: STATUS_SUCCESS,
  });
  return {
    responseUrl: signedRedirectUrl(sp.sloUrl, 'SAMLResponse', xml, m.relayState, signer),
    frontChannel: await samlLogoutUrls(app, realm, ended, sp.clientId),
    endedBrowserSession: browser,
  };
}

async function endSessions(
  tx: Tx,
  realm: RealmRow,
  sessions: { session_id: string; user_id: string }[],
  clientId: string,
  now: Date,
  correlationId: string,
): Promise<string[]> {
  const ended: string[] = [];
  for (const s of sessions) {
    const session = { id: s.session_id, userId: s.user_id };
    const via = { via: 'saml_logout_request', client_id: clientId };
    if (await endLoggedOutSession(tx, realm.id, session, via, correlationId, now)) ended.push(s.session_id);
  }
  return ended;
}

/**
 * Signed LogoutRequests (HTTP-Redirect) to the active SAML clients with an SLO URL that these
 * ended sessions signed in to, but the one named by `except`. Empty when there are none.
 */
export async function samlLogoutUrls(
  app: SamlDeps,
  realm: RealmRow,
  sessionIds: string[],
  except: string | null = null,
): Promise<string[]> {
  if (sessionIds.length === 0 || !app.keyring) return [];
  const targets = await many<{
    session_id: string;
    slo_url: string;
    name_id: string;
    name_id_format: string;
  }>(
    app.db,
    `select p.session_id, s.slo_url, p.name_id, p.name_id_format from saml_session_participants p
       join clients c on c.realm_id = p.realm_id and c.client_id = p.client_id and c.state = 'active'
       join saml_clients s on s.realm_id = c.realm_id and s.client_row_id = c.id
      where p.realm_id = $1 and p.session_id = any($2::text[]) and s.slo_url is not null
        and p.client_id is distinct from $3
      order by p.created_at, p.client_id`,
    [realm.id, sessionIds, except],
  );
  if (targets.length === 0) return [];
  const now = app.clock.now();
  const signer = await activeSamlSigner(app.db, app.keyring, realm, now);
  const issuer = idpEntityId(app.config.server.publicOrigin, realm.name);
  return targets.map((t) =>
    signedRedirectUrl(
      t.slo_url,
      'SAMLRequest',
      buildLogoutRequest({
        issuer,
        destination: t.slo_url,
        now,
        validityMs: SENT_VALIDITY_MS,
        nameId: { format: t.name_id_format, value: t.name_id },
        sessionIndex: t.session_id,
      }),
      null,
      signer,
    ),
  );
}

/**
 * An SP's LogoutResponse to a LogoutRequest ProudAuth sent: checked like a request (its SP and
 * signature); the session had ended before the request went out, so nothing changes here.
 */
export async function acceptLogoutResponse(
  app: SamlDeps,
  realm: RealmRow,
  m: { samlResponse: string; rawQuery: string },
): Promise<{ success: boolean }> {
  const res = read(parseLogoutResponse, m.samlResponse);
  await sendingSp(app, realm, res.issuer, m.rawQuery, 'SAMLResponse');
  if (res.destination !== null && res.destination !== sloUrl(app.config.server.publicOrigin, realm.name))
    throw refuse('the Destination is not this endpoint');
  return { success: res.status === STATUS_SUCCESS };
}
