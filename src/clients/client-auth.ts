// Client authentication at the token, introspection and revocation endpoints (RFC 6749 section
// 2.3, RFC 7523). The client row and its active secrets are read in one query per request, or, for
// client_credentials, from a copy the same request proved current (service-token-cache.ts), so a
// disable or a revocation counts from its commit. A secret costs one HMAC.

import { basicChallenge, oauthError } from '../kernel/oauth-error.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Queryable } from '../platform/db/db.ts';
import { assertionSubject, verifyClientAssertion } from './client-assertion.ts';
import {
  type ClientAuthFacts,
  type ClientAuthRow,
  findClientForAuth,
  recordAssertionJti,
} from './client-auth.repo.ts';
import {
  type ClientAuthInput,
  type ClientAuthMethod,
  readPresentedCredentials,
} from './client-auth-request.ts';
import { touchSecretUsed } from './client-secrets.repo.ts';
import { matchClientSecret, spendClientSecretCheck } from './client-secrets.ts';
import { certificateProves, isMtlsMethod } from './mtls-client-auth.ts';

export interface ClientAuthOptions<C extends ClientAuthFacts = ClientAuthRow> {
  now: Date;
  /** limits.max_token_bytes */
  maxTokenBytes: number;
  /** Named in the Basic challenge; the realm's name. */
  challengeRealm: string;
  /** `aud` values a client assertion may carry: the realm issuer and this endpoint's URL. */
  assertionAudiences: readonly string[];
  /** tokens.clock_skew in seconds */
  clockSkewSeconds: number;
  /**
   * Loads the client instead of findClientForAuth, so a caller can fold the lookup into a
   * statement it runs anyway (introspection: one round trip per call).
   */
  loadClient?: (clientId: string) => Promise<C | null>;
  /**
   * Called with the presented client_id once it is known, before the client is loaded or any
   * credential checked: it may throw to refuse the request (a spent failure budget).
   */
  beforeVerify?: (clientId: string) => void;
}

export interface AuthenticatedClient<C extends ClientAuthFacts = ClientAuthRow> {
  client: C;
  method: ClientAuthMethod;
  /** The secret that matched (secret methods only). */
  secretId: string | null;
}

// last_used_at is kept to the minute: enough to spot an unused secret before revoking it.
const LAST_USED_RESOLUTION_MS = 60_000;

/** Throws OAuthError (invalid_request or invalid_client) unless exactly one method proves the client. */
export async function authenticateClient<C extends ClientAuthFacts = ClientAuthRow>(
  q: Queryable,
  keyring: RootKeyring,
  realmId: string,
  input: ClientAuthInput,
  opts: ClientAuthOptions<C>,
): Promise<AuthenticatedClient<C>> {
  const presented = readPresentedCredentials(input, opts);
  const challenge =
    presented.method === 'client_secret_basic' ? basicChallenge(opts.challengeRealm) : undefined;
  const fail = (debug: string) => oauthError.invalidClient({ ...(challenge ? { challenge } : {}), debug });

  const clientId =
    presented.method === 'private_key_jwt'
      ? (presented.clientId ?? assertionSubject(presented.assertion))
      : presented.clientId;
  if (clientId === null) throw fail('assertion_without_subject');
  opts.beforeVerify?.(clientId);
  // Without a loader C is ClientAuthRow (the default), which findClientForAuth returns.
  const client: C | null = opts.loadClient
    ? await opts.loadClient(clientId)
    : ((await findClientForAuth(q, realmId, clientId, opts.now)) as C | null);

  if (presented.method === 'client_secret_basic' || presented.method === 'client_secret_post') {
    // Unknown, disabled, wrong method or wrong secret: the same single HMAC and the same answer.
    if (!client) {
      spendClientSecretCheck(keyring, presented.secret);
      throw fail('unknown_client');
    }
    const secretId = matchClientSecret(keyring, realmId, client.id, presented.secret, client.secrets);
    checkClient(client, presented, fail);
    if (!secretId) throw fail('secret_mismatch');
    const secret = client.secrets.find((s) => s.id === secretId);
    const used = secret?.lastUsedAt;
    if (secret && (!used || opts.now.getTime() - used.getTime() >= LAST_USED_RESOLUTION_MS)) {
      await touchSecretUsed(q, realmId, secretId, opts.now, LAST_USED_RESOLUTION_MS);
      // A loader may hand out a kept copy of the secrets (service-token-cache.ts): it learns the
      // use too, so the next requests of the minute write nothing.
      secret.lastUsedAt = opts.now;
    }
    return { client, method: presented.method, secretId };
  }

  if (!client) throw fail('unknown_client');
  if (presented.method === 'none' && isMtlsMethod(client.token_endpoint_auth_method)) {
    // Only client_id was sent: the client certificate must prove a mutual-TLS client.
    if (!certificateProves(client, input.certificate ?? null, opts.now)) throw fail('certificate_mismatch');
    checkClient(client, { method: client.token_endpoint_auth_method }, fail);
    return { client, method: client.token_endpoint_auth_method, secretId: null };
  }
  checkClient(client, presented, fail);
  if (presented.method === 'private_key_jwt') {
    const verified = await verifyClientAssertion(presented.assertion, {
      clientId: client.client_id,
      jwks: client.jwks,
      audiences: opts.assertionAudiences,
      now: opts.now,
      clockSkewSeconds: opts.clockSkewSeconds,
    });
    const fresh = await recordAssertionJti(
      q,
      realmId,
      client.id,
      verified.jtiDigest,
      verified.replayUntil,
      opts.now,
    );
    if (!fresh) throw fail('assertion_replayed');
  }
  return { client, method: presented.method, secretId: null };
}

// A secret proves the same thing in the header or in the form, so a client registered for one
// secret method accepts the other (decision D19, as Keycloak does): libraries differ in their
// default. The registered method is still what the client record and discovery advertise.
const SECRET_METHODS: readonly ClientAuthMethod[] = ['client_secret_basic', 'client_secret_post'];

/** The registered method accepts the presented one: exactly, or either secret method for the other. */
function methodAccepted(registered: string, presented: ClientAuthMethod): boolean {
  if (registered === presented) return true;
  return SECRET_METHODS.includes(presented) && (SECRET_METHODS as readonly string[]).includes(registered);
}

/** The client may authenticate at all, and with a method its registration accepts. */
function checkClient(
  client: ClientAuthFacts,
  presented: { method: ClientAuthMethod },
  fail: (debug: string) => Error,
): void {
  if (client.state !== 'active') throw fail('client_disabled');
  if (!methodAccepted(client.token_endpoint_auth_method, presented.method)) throw fail('method_mismatch');
}
