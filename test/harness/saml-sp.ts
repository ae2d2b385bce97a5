// samlify (npm) as the SAML service provider of the SAML identity provider tests
// (docs/saml-idp.md).
import { createRequire } from 'node:module';

// samlify's declarations pull the browser DOM library into the whole program (as @xmldom's do,
// src/saml-idp/xml-dom.ts), so it is loaded untyped, with the members used here.
export interface Idp {
  readonly kind: 'idp';
}
export interface Sp {
  createLoginRequest(
    idp: Idp,
    binding: 'redirect' | 'post',
  ): { id: string; context: string; entityEndpoint?: string };
  parseLoginResponse(
    idp: Idp,
    binding: 'post',
    req: { body: Record<string, string | undefined> },
    // biome-ignore lint/suspicious/noExplicitAny: the test reads samlify's extract members by name
  ): Promise<{ extract: any }>;
  createLogoutRequest(
    idp: Idp,
    binding: 'redirect',
    user: { logoutNameID: string; sessionIndex?: string },
    relayState?: string,
  ): { id: string; context: string };
  createLogoutResponse(
    idp: Idp,
    // biome-ignore lint/suspicious/noExplicitAny: samlify's parsed request, passed back as it gave it
    requestInfo: any,
    binding: 'redirect',
  ): { id: string; context: string };
  parseLogoutRequest(
    idp: Idp,
    binding: 'redirect',
    req: { query: Record<string, string>; octetString: string },
    // biome-ignore lint/suspicious/noExplicitAny: the test reads samlify's extract members by name
  ): Promise<{ extract: any }>;
  parseLogoutResponse(
    idp: Idp,
    binding: 'redirect',
    req: { query: Record<string, string>; octetString: string },
    // biome-ignore lint/suspicious/noExplicitAny: the test reads samlify's extract members by name
  ): Promise<{ extract: any }>;
}
export const samlify = createRequire(import.meta.url)('samlify') as {
  setSchemaValidator(v: { validate: (xml: string) => Promise<string> }): void;
  IdentityProvider(o: Record<string, unknown>): Idp;
  ServiceProvider(o: Record<string, unknown>): Sp;
  Constants: { namespace: { binding: { post: string; redirect: string } } };
};

// samlify asks the application for an XML schema validator; the checks under test are its
// signature, issuer, audience and time checks, which run regardless.
samlify.setSchemaValidator({ validate: async () => 'skipped' });

export const SP_ENTITY = 'https://sp.example.com/saml/metadata';
export const ACS = 'https://sp.example.com/saml/acs';
export const SP_SLO = 'https://sp.example.com/saml/slo';
export const binding = samlify.Constants.namespace.binding;

/** What samlify's redirect-binding parsers take: the decoded query and the signed octet string. */
export function redirectParts(url: string) {
  const raw = url.slice(url.indexOf('?') + 1);
  const pairs = raw.split('&').map((p) => p.split('=') as [string, string]);
  const pick = (k: string) => pairs.find(([n]) => n === k);
  const octetString = ['SAMLRequest', 'SAMLResponse', 'RelayState', 'SigAlg']
    .map(pick)
    .filter((p): p is [string, string] => p !== undefined)
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const query = Object.fromEntries(pairs.map(([k, v]) => [k, decodeURIComponent(v)]));
  return { query, octetString };
}

/** samlify's view of our metadata, and a service provider (signing its requests when given a key). */
export function samlPeers(
  idpMetadata: string,
  sp: {
    privateKey?: string;
    signingCert?: string;
    entityId?: string;
    acs?: string;
    slo?: string;
    /** The NameIDPolicy Format asked for; by default unspecified (the registered one). */
    nameIdFormat?: string;
    /** The private key of the SP's encryption certificate: assertions must come encrypted. */
    encPrivateKey?: string;
  } = {},
) {
  const signed = sp.privateKey !== undefined;
  const idp = samlify.IdentityProvider({
    // Single logout messages go signed both ways (docs/saml-idp.md, Single logout).
    wantLogoutRequestSigned: signed,
    wantLogoutResponseSigned: signed,
    // samlify reads whether to decrypt from the sending IdP's settings.
    isAssertionEncrypted: sp.encPrivateKey !== undefined,
    // Our metadata leaves WantAuthnRequestsSigned to each SAML client; samlify signs POST
    // requests only for an IdP that asks, so a signing SP reads it as asking.
    metadata: signed
      ? idpMetadata.replace('WantAuthnRequestsSigned="false"', 'WantAuthnRequestsSigned="true"')
      : idpMetadata,
  });
  const serviceProvider = samlify.ServiceProvider({
    entityID: sp.entityId ?? SP_ENTITY,
    nameIDFormat: [sp.nameIdFormat ?? 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified'],
    assertionConsumerService: [{ Binding: binding.post, Location: sp.acs ?? ACS }],
    ...(sp.slo ? { singleLogoutService: [{ Binding: binding.redirect, Location: sp.slo }] } : {}),
    wantLogoutRequestSigned: signed,
    wantLogoutResponseSigned: signed,
    ...(sp.encPrivateKey ? { isAssertionEncrypted: true, encPrivateKey: sp.encPrivateKey } : {}),
    wantAssertionsSigned: true,
    wantMessageSigned: true,
    authnRequestsSigned: signed,
    ...(signed
      ? {
          privateKey: sp.privateKey,
          signingCert: sp.signingCert,
          // samlify's default signature place is a Response's Issuer; a request's is its own.
          signatureConfig: {
            prefix: 'ds',
            location: {
              reference: "/*[local-name(.)='AuthnRequest']/*[local-name(.)='Issuer']",
              action: 'after',
            },
          },
        }
      : {}),
  });
  return { idp, sp: serviceProvider };
}
