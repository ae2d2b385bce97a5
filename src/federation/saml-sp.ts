// ProudAuth as a SAML 2.0 service provider of an upstream IdP (docs/federation.md, SAML). Every
// signature, decryption and condition check is node-saml's (xml-crypto underneath, with its
// signature-wrapping defences: it reads only what a valid signature covers, and refuses a response
// with more than one assertion). On top of it, here: the AuthnRequest's ID is the InResponseTo the
// response must carry (unsolicited responses are refused), the subject confirmation's Recipient and
// the response's Destination must be this connection's ACS, the assertion needs an ID (for the
// replay cache), and the attributes become claims for the connection's claim mapping.

import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import {
  type CacheProvider,
  generateServiceProviderMetadata,
  type Profile,
  SAML,
  type SamlConfig,
  SamlStatusError,
  ValidateInResponseTo,
} from '@node-saml/node-saml';
import { type ConnectionRow, effectiveClaims, effectiveConfig } from '../identity-providers/index.ts';
import { identityOf, type UpstreamIdentity } from './upstream-identity.ts';

/** The connection's addresses as a service provider: its entity id is its metadata URL. */
export interface SamlEndpoints {
  entityId: string;
  acs: string;
}

export const samlEndpoints = (publicOrigin: string, realm: string, alias: string): SamlEndpoints => {
  const base = `${publicOrigin}/realms/${realm}/federation/${encodeURIComponent(alias)}/saml`;
  return { entityId: `${base}/metadata`, acs: `${base}/acs` };
};

const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';
/** Without an expiry of its own, an accepted assertion id is remembered this long. */
const DEFAULT_REPLAY_WINDOW_MS = 60 * 60 * 1000;

/** A new AuthnRequest ID: an NCName (xs:ID), so it starts with a letter or underscore. */
export const newSamlRequestId = (): string => `_${randomBytes(20).toString('hex')}`;

/** Knows exactly one outstanding request: the one this sign-in sent. */
const oneRequest = (id: string | null, createdAt: Date): CacheProvider => ({
  saveAsync: async () => null,
  getAsync: async (key) => (id !== null && key === id ? createdAt.toISOString() : null),
  removeAsync: async () => null,
});

interface SamlUse {
  endpoints: SamlEndpoints;
  privateKeyPem: string;
  clockSkewMs: number;
  requestId: string | null;
  requestCreatedAt: Date;
}

function samlOf(c: ConnectionRow, u: SamlUse): SAML {
  const config = effectiveConfig(c);
  const options: SamlConfig = {
    entryPoint: config.sso_url,
    issuer: u.endpoints.entityId,
    callbackUrl: u.endpoints.acs,
    audience: u.endpoints.entityId,
    idpCert: config.idp_certificates ?? [],
    idpIssuer: c.issuer,
    privateKey: u.privateKeyPem,
    decryptionPvk: u.privateKeyPem,
    signatureAlgorithm: 'sha256',
    digestAlgorithm: SHA256,
    identifierFormat: config.name_id_format ?? null,
    wantAssertionsSigned: config.want_assertions_signed !== false,
    wantAuthnResponseSigned: config.want_assertions_signed === false,
    acceptedClockSkewMs: u.clockSkewMs,
    validateInResponseTo: ValidateInResponseTo.always,
    // The request state row decides how long a request stays answerable.
    requestIdExpirationPeriodMs: 24 * 60 * 60 * 1000,
    cacheProvider: oneRequest(u.requestId, u.requestCreatedAt),
    disableRequestedAuthnContext: true,
    authnRequestBinding: 'HTTP-Redirect',
    ...(u.requestId ? { generateUniqueId: () => String(u.requestId) } : {}),
  };
  return new SAML(options);
}

/** The IdP URL with a signed AuthnRequest (HTTP-Redirect binding) and the RelayState. */
export async function authnRequestUrl(
  c: ConnectionRow,
  u: Omit<SamlUse, 'requestCreatedAt'> & { requestId: string },
  relayState: string,
): Promise<string> {
  return samlOf(c, { ...u, requestCreatedAt: new Date() }).getAuthorizeUrlAsync(relayState, undefined, {});
}

/** The connection's SP metadata: entity id, ACS (HTTP-POST), signing and encryption certificate. */
export function spMetadataXml(c: ConnectionRow, endpoints: SamlEndpoints, privateKeyPem: string): string {
  const config = effectiveConfig(c);
  return generateServiceProviderMetadata({
    issuer: endpoints.entityId,
    callbackUrl: endpoints.acs,
    identifierFormat: config.name_id_format ?? null,
    wantAssertionsSigned: config.want_assertions_signed !== false,
    privateKey: privateKeyPem,
    decryptionPvk: privateKeyPem,
    publicCerts: [String(c.sp_certificate)],
    decryptionCert: String(c.sp_certificate),
    signatureAlgorithm: 'sha256',
  });
}

export type SamlOutcome =
  | { kind: 'identity'; identity: UpstreamIdentity; assertionId: string; replayUntil: Date }
  | { kind: 'declined'; error: string }
  | { kind: 'refused'; reason: string };

type XmlJs = { _?: string; $?: Record<string, string> } & Record<string, unknown>;
const children = (n: unknown, name: string): XmlJs[] => {
  const v = n && typeof n === 'object' ? (n as Record<string, unknown>)[name] : undefined;
  return Array.isArray(v) ? (v as XmlJs[]) : [];
};
const textOf = (n: XmlJs | string | undefined): string | null =>
  typeof n === 'string' ? n : typeof n?._ === 'string' ? n._ : null;

// Loaded untyped: the typings of @xmldom/xmldom pull the browser DOM library into the program.
const { DOMParser } = createRequire(import.meta.url)('@xmldom/xmldom') as {
  DOMParser: new () => {
    parseFromString(
      xml: string,
      type: string,
    ): { documentElement: { getAttribute(n: string): string | null } | null };
  };
};

/** The Destination of the response envelope, when it names one. */
function destinationOf(samlResponse: string): string | null {
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  const root = new DOMParser().parseFromString(xml, 'text/xml').documentElement;
  const d = root?.getAttribute('Destination');
  return d ? d : null;
}

/** First values of the attributes, and the well-known names folded into the default claims. */
function claimsOf(profile: Profile, classRef: string | null): Record<string, unknown> {
  const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
  const claims: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(attributes)) {
    const first = Array.isArray(v) ? v[0] : v;
    if (typeof first === 'string') claims[name] = first;
  }
  const pick = (...names: string[]) => names.map((n) => claims[n]).find((v) => typeof v === 'string');
  const ms = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';
  return {
    email: pick('mail', 'urn:oid:0.9.2342.19200300.100.1.3', `${ms}/emailaddress`),
    name: pick('displayName', 'urn:oid:2.16.840.1.113730.3.1.241', `${ms}/name`),
    given_name: pick('givenName', 'urn:oid:2.5.4.42', `${ms}/givenname`),
    family_name: pick('sn', 'surname', 'urn:oid:2.5.4.4', `${ms}/surname`),
    ...claims,
    name_id: profile.nameID,
    acr: classRef,
  };
}

/** Checks an HTTP-POST SAMLResponse answering the given request. Never throws for what the IdP sent. */
export async function validateSamlResponse(
  c: ConnectionRow,
  u: SamlUse & { requestId: string },
  samlResponse: string,
): Promise<SamlOutcome> {
  let profile: Profile | null;
  try {
    ({ profile } = await samlOf(c, u).validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (e) {
    if (e instanceof SamlStatusError) return { kind: 'declined', error: 'saml_status' };
    return { kind: 'refused', reason: e instanceof Error ? e.message : 'refused' };
  }
  if (!profile) return { kind: 'refused', reason: 'no assertion' };
  if (profile.issuer !== c.issuer) return { kind: 'refused', reason: 'the assertion names another issuer' };
  const destination = destinationOf(samlResponse);
  if (destination !== null && destination !== u.endpoints.acs)
    return { kind: 'refused', reason: 'the response is for another Destination' };
  // Only the assertion node-saml verified is read from here on.
  const assertion = (profile.getAssertion?.() as { Assertion?: XmlJs } | undefined)?.Assertion;
  const assertionId = assertion?.$?.ID;
  if (!assertionId) return { kind: 'refused', reason: 'the assertion has no ID' };
  const confirmations = children(children(assertion, 'Subject')[0], 'SubjectConfirmation').flatMap((s) =>
    children(s, 'SubjectConfirmationData'),
  );
  const recipients = confirmations.map((d) => d.$?.Recipient ?? null);
  if (recipients.length === 0 || recipients.some((r) => r !== u.endpoints.acs))
    return { kind: 'refused', reason: 'the subject confirmation names another Recipient' };
  const classRef = textOf(
    children(
      children(children(assertion, 'AuthnStatement')[0], 'AuthnContext')[0],
      'AuthnContextClassRef',
    )[0],
  );
  const identity = identityOf(c.issuer, claimsOf(profile, classRef), effectiveClaims(c), effectiveConfig(c));
  if (!identity) return { kind: 'refused', reason: 'the assertion named no usable subject' };
  const ends = [
    ...children(assertion, 'Conditions').map((n) => n.$?.NotOnOrAfter),
    ...confirmations.map((d) => d.$?.NotOnOrAfter),
  ]
    .map((v) => (v ? Date.parse(v) : Number.NaN))
    .filter((v) => Number.isFinite(v));
  const until = ends.length > 0 ? Math.max(...ends) : Date.now() + DEFAULT_REPLAY_WINDOW_MS;
  return { kind: 'identity', identity, assertionId, replayUntil: new Date(until + u.clockSkewMs) };
}
