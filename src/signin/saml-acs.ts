// The assertion consumer service of a SAML connection (docs/federation.md, SAML): the IdP's
// HTTP-POST answer arrives here cross-site, without the pa_fed cookie (SameSite=Lax), so nothing
// is decided yet. The RelayState names the request state federation/start kept; the response is
// checked against that request (federation/saml-sp.ts: signatures, decryption, InResponseTo,
// audience, Recipient, Destination, times), an accepted assertion id is remembered so it never
// counts twice, and the outcome is kept on the request. The browser then goes on by a top-level
// GET to the connection's callback, which claims the request once, checks pa_fed, and applies the
// outcome to the sign-in exactly as for OpenID Connect (federation-callback.ts).
import { samlEndpoints } from '../federation/saml-sp.ts';
import type { CallbackOutcome } from '../federation/upstream-client.ts';
import {
  answerSamlRequest,
  findConnectionByRef,
  findOpenSamlRequest,
  rememberSamlAssertion,
} from '../identity-providers/index.ts';
import { digestToken } from '../kernel/digest.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import type { SigninDeps } from './signin.deps.ts';

/** SAMLResponse larger than this is refused before it is parsed. */
export const MAX_SAML_RESPONSE_BYTES = 256 * 1024;

export type AcsAnswer =
  | { kind: 'continue'; location: string }
  | { kind: 'problem'; status: number; problem: 'unknown_realm' | 'unknown_request' };

/** What the callback applies: the outcome shape the OpenID Connect path produces, kept as JSON. */
export type StoredSamlOutcome =
  | Exclude<CallbackOutcome, { kind: 'identity' }>
  | {
      kind: 'identity';
      identity: Extract<CallbackOutcome, { kind: 'identity' }>['identity'];
    };

export async function handleAcs(
  app: SigninDeps,
  input: { realmName: string; alias: string; form: URLSearchParams },
): Promise<AcsAnswer> {
  const realm = await findRequestedRealm(app, input.realmName);
  if (!realm) return { kind: 'problem', status: 404, problem: 'unknown_realm' };
  const relayState = input.form.get('RelayState');
  const response = input.form.get('SAMLResponse');
  const connection = await findConnectionByRef(app.db, realm.id, input.alias);
  // No RelayState: an unsolicited (IdP-initiated) response, which is not accepted (docs/decisions.md).
  if (
    !relayState ||
    relayState.length > 512 ||
    !response ||
    response.length > MAX_SAML_RESPONSE_BYTES ||
    connection?.kind !== 'saml' ||
    connection.alias !== input.alias.toLowerCase()
  )
    return { kind: 'problem', status: 400, problem: 'unknown_request' };
  const request = await findOpenSamlRequest(app.db, realm.id, digestToken(relayState), app.clock.now());
  if (!request?.saml_request_id) return { kind: 'problem', status: 400, problem: 'unknown_request' };
  const endpoints = samlEndpoints(app.config.server.publicOrigin, realm.name, connection.alias);
  let outcome: StoredSamlOutcome;
  let assertion: { id: string; until: Date } | null = null;
  if (request.provider_id !== connection.id) {
    outcome = { kind: 'refused', reason: 'the answer arrived at another connection' };
  } else if (connection.state !== 'active') {
    outcome = { kind: 'unavailable', reason: 'the connection is disabled' };
  } else {
    const checked = await app.upstream.finishSaml(
      connection,
      endpoints,
      { id: request.saml_request_id, createdAt: new Date(request.created_at) },
      response,
    );
    outcome = checked.kind === 'identity' ? { kind: 'identity', identity: checked.identity } : checked;
    if (checked.kind === 'identity') assertion = { id: checked.assertionId, until: checked.replayUntil };
  }
  const kept = await app.db.tx(async (q) => {
    const now = app.clock.now();
    // One transaction: an assertion id is spent only with the answer it gave.
    if (
      assertion &&
      !(await rememberSamlAssertion(q, realm.id, connection.id, assertion.id, assertion.until, now))
    )
      outcome = { kind: 'refused', reason: 'the assertion was used before' };
    return answerSamlRequest(q, realm.id, request.id, outcome, now);
  });
  if (!kept) return { kind: 'problem', status: 400, problem: 'unknown_request' };
  const back = new URL(`${app.config.server.publicOrigin}/realms/${realm.name}/federation/`);
  back.pathname += `${encodeURIComponent(connection.alias)}/callback`;
  back.searchParams.set('state', relayState);
  return { kind: 'continue', location: back.pathname + back.search };
}
