// A SAML 2.0 identity provider nobody here wrote: samlify, driven as the upstream of a SAML
// connection. It reads the connection's SP metadata, checks the signature of the AuthnRequest our
// redirect carries, and answers with a signed (optionally encrypted) Response whose members a test
// may change (audience, Destination, Recipient, times, InResponseTo, assertion ID).
import { createRequire } from 'node:module';
import { inflateRawSync } from 'node:zlib';
import { newSpKeyPair } from '../../src/identity-providers/saml-sp-keys.ts';

// samlify and @xmldom/xmldom are loaded untyped: their typings pull the browser DOM library into
// the whole program. The shapes below are the little the tests use.
interface SamlifyEntity {
  getMetadata(): string;
  createLoginResponse(
    sp: SamlifyEntity,
    requestInfo: unknown,
    binding: string,
    user: Record<string, unknown>,
    customTagReplacement?: (template: string) => { id: string; context: string },
  ): Promise<{ id: string; context: string }>;
  parseLoginRequest(
    sp: SamlifyEntity,
    binding: string,
    req: unknown,
  ): Promise<{ extract: { request: { id: string } } }>;
}
interface Samlify {
  setSchemaValidator(v: { validate(xml: string): Promise<string> }): void;
  IdentityProvider(o: Record<string, unknown>): SamlifyEntity;
  ServiceProvider(o: Record<string, unknown>): SamlifyEntity;
  SamlLib: { replaceTagsByValue(template: string, values: Record<string, unknown>): string };
}
const load = createRequire(import.meta.url);
const samlify = load('samlify') as Samlify;
// The XML schema check is samlify's optional validator hook; the SP side (node-saml) is what is tested.
samlify.setSchemaValidator({ validate: async () => 'skipped' });

export interface XmlNode {
  nodeName: string;
  localName: string;
  parentNode: XmlNode | null;
  firstChild: XmlNode | null;
  nextSibling: XmlNode | null;
  childNodes: ArrayLike<XmlNode>;
  textContent: string | null;
  ownerDocument: XmlDoc;
  cloneNode(deep: boolean): XmlNode;
  appendChild(n: XmlNode): XmlNode;
  insertBefore(n: XmlNode, ref: XmlNode | null): XmlNode;
  removeChild(n: XmlNode): XmlNode;
  replaceChild(n: XmlNode, old: XmlNode): XmlNode;
  setAttribute(n: string, v: string): void;
  getAttribute(n: string): string | null;
  getElementsByTagNameNS(ns: string, name: string): ArrayLike<XmlNode>;
}
export interface XmlDoc extends XmlNode {
  documentElement: XmlNode;
  createElementNS(ns: string, name: string): XmlNode;
  createTextNode(text: string): XmlNode;
}
const xmldom = load('@xmldom/xmldom') as {
  DOMParser: new () => { parseFromString(s: string, t: string): XmlDoc };
  XMLSerializer: new () => { serializeToString(n: XmlNode): string };
};
export const parseXml = (xml: string): XmlDoc => new xmldom.DOMParser().parseFromString(xml, 'text/xml');
export const serializeXml = (n: XmlNode): string => new xmldom.XMLSerializer().serializeToString(n);

export const SAML_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
export const SAMLP_NS = 'urn:oasis:names:tc:SAML:2.0:protocol';
export const DS_NS = 'http://www.w3.org/2000/09/xmldsig#';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
export const MFA_CLASS = 'http://schemas.microsoft.com/claims/multipleauthn';
export const PASSWORD_CLASS = 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport';

export interface SamlUser {
  nameId: string;
  email?: string;
  displayName?: string;
  classRef?: string;
}

/** What a test may change in the answer; undefined means the correct value. */
export interface Tamper {
  audience?: string;
  destination?: string;
  recipient?: string;
  /** Minutes from now for NotOnOrAfter (both conditions and confirmation). */
  notOnOrAfterMinutes?: number;
  /** null: no InResponseTo at all (an unsolicited response). */
  inResponseTo?: string | null;
  assertionId?: string;
}

export interface SamlIdp {
  entityId: string;
  metadata: string;
  /** Reads our AuthnRequest off the redirect URL (samlify checks its signature); answers its ID. */
  receive(redirectUrl: string): Promise<{ requestId: string; relayState: string; acs: string }>;
  /** A base64 SAMLResponse for the SP whose metadata is given. */
  respond(spMetadata: string, requestId: string, user: SamlUser, tamper?: Tamper): Promise<string>;
}

let counter = 0;

export async function startSamlIdp(
  o: { encrypt?: boolean; signResponse?: boolean; ssoUrl?: string } = {},
): Promise<SamlIdp> {
  counter += 1;
  const entityId = `https://idp${counter}.saml.test/metadata`;
  const keys = await newSpKeyPair('samlify test idp', new Date());
  const idp = samlify.IdentityProvider({
    entityID: entityId,
    privateKey: keys.privateKeyPem,
    signingCert: keys.certificatePem,
    singleSignOnService: [{ Binding: REDIRECT, Location: o.ssoUrl ?? `https://idp${counter}.saml.test/sso` }],
    isAssertionEncrypted: o.encrypt === true,
    wantAuthnRequestsSigned: true,
  });
  const spOf = (metadata: string) =>
    samlify.ServiceProvider({ metadata, wantMessageSigned: o.signResponse === true });
  return {
    entityId,
    metadata: idp.getMetadata(),
    async receive(redirectUrl) {
      const url = new URL(redirectUrl);
      const q = Object.fromEntries(url.searchParams);
      const xml = inflateRawSync(Buffer.from(String(q.SAMLRequest), 'base64')).toString('utf8');
      const acs = parseXml(xml).documentElement.getAttribute('AssertionConsumerServiceURL') ?? '';
      const issuer = parseXml(xml).documentElement.getElementsByTagNameNS(SAML_NS, 'Issuer')[0]?.textContent;
      // samlify checks the redirect signature against the SP certificate of the SP metadata.
      const spMetadata = await (await fetch(String(issuer))).text();
      const parsed = await idp.parseLoginRequest(spOf(spMetadata), 'redirect', {
        query: q,
        octetString: url.search
          .slice(1)
          .split('&')
          .filter((p) => !p.startsWith('Signature='))
          .join('&'),
      });
      return { requestId: parsed.extract.request.id, relayState: String(q.RelayState), acs };
    },
    async respond(spMetadata, requestId, user, tamper = {}) {
      const sp = spOf(spMetadata);
      const at = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
      const acs = /Location="([^"]+)"/.exec(
        spMetadata.slice(spMetadata.indexOf('AssertionConsumerService')),
      )?.[1];
      const spEntity = /entityID="([^"]+)"/.exec(spMetadata)?.[1];
      const ends = at(tamper.notOnOrAfterMinutes ?? 5);
      const attribute = (name: string, value: string) =>
        `<saml:Attribute Name="${name}"><saml:AttributeValue xsi:type="xs:string">${value}</saml:AttributeValue></saml:Attribute>`;
      const attributes = [
        user.email ? attribute('email', user.email) : '',
        user.displayName ? attribute('displayName', user.displayName) : '',
      ].join('');
      const id = `_r${Math.random().toString(16).slice(2)}`;
      const replace = (template: string) => ({
        id,
        context: samlify.SamlLib.replaceTagsByValue(
          template
            .replace(
              '{AuthnStatement}',
              `<saml:AuthnStatement AuthnInstant="${at(0)}"><saml:AuthnContext><saml:AuthnContextClassRef>${user.classRef ?? PASSWORD_CLASS}</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
            )
            .replace(
              '{AttributeStatement}',
              attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : '',
            ),
          {
            ID: id,
            AssertionID: tamper.assertionId ?? `_a${Math.random().toString(16).slice(2)}`,
            Destination: tamper.destination ?? acs,
            Audience: tamper.audience ?? spEntity,
            SubjectRecipient: tamper.recipient ?? acs,
            Issuer: entityId,
            IssueInstant: at(0),
            StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
            ConditionsNotBefore: at(-1),
            ConditionsNotOnOrAfter: ends,
            SubjectConfirmationDataNotOnOrAfter: ends,
            NameIDFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
            NameID: user.nameId,
            InResponseTo: tamper.inResponseTo === null ? undefined : (tamper.inResponseTo ?? requestId),
          },
        ),
      });
      const r = await idp.createLoginResponse(
        sp,
        { extract: { request: { id: requestId } } },
        'post',
        {},
        replace,
      );
      return r.context;
    },
  };
}

/** The administration API body of a connection to this IdP, by uploaded metadata. */
export const samlConnectionBody = (idp: SamlIdp, extra: Record<string, unknown> = {}) => ({
  alias: 'corp-saml',
  display_name: 'Corp SAML',
  kind: 'saml',
  idp_metadata_xml: idp.metadata,
  config: { trust_email: true },
  ...extra,
});
