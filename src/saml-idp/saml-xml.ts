// SAML 2.0 messages of the identity provider (docs/saml-idp.md): reading AuthnRequests of both
// bindings, and building the signed Response with its signed Assertion. XML is parsed and built
// through a DOM (@xmldom/xmldom), signatures are made and checked by xml-crypto; nothing here
// assembles XML or signatures from strings.
import { randomBytes } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { SignedXml } from 'xml-crypto';
import { isElement, type XDocument, type XElement, xmldom } from './xml-dom.ts';

const { DOMImplementation, DOMParser, XMLSerializer } = xmldom;

export const NS = {
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
} as const;

export const BINDING = {
  redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
  post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
} as const;

export const NAME_ID_FORMAT_URI = {
  persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  email: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  transient: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
} as const;
const UNSPECIFIED_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified';

export const AUTHN_CONTEXT = {
  password: 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport',
  // REFEDS MFA profile: the class SPs commonly ask for and read.
  mfa: 'https://refeds.org/profile/mfa',
  unspecified: 'urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified',
} as const;

export const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1';
const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';

/** An encoded AuthnRequest is at most this long; its XML at most MAX_XML_BYTES. */
export const MAX_ENCODED_REQUEST = 32 * 1024;
const MAX_XML_BYTES = 64 * 1024;

/** Whether a request's IssueInstant is current: at most 5 minutes old, at most 1 minute ahead. */
export function isCurrentInstant(issueInstant: Date, now: Date): boolean {
  const age = now.getTime() - issueInstant.getTime();
  return age <= 5 * 60_000 && age >= -60_000;
}

export class SamlRequestError extends Error {
  override readonly name = 'SamlRequestError';
}

export interface AuthnRequest {
  id: string;
  issuer: string;
  issueInstant: Date;
  destination: string | null;
  acsUrl: string | null;
  protocolBinding: string | null;
  nameIdFormat: string | null;
  forceAuthn: boolean;
  isPassive: boolean;
  /** The parsed document and its XML, for the POST binding's signature check. */
  xml: string;
  doc: XDocument;
}

/** Parses XML refusing document types (no entities of any kind) and parse errors. */
export function parseXml(xml: string): XDocument {
  if (Buffer.byteLength(xml, 'utf8') > MAX_XML_BYTES) throw new SamlRequestError('the request is too large');
  if (/<!DOCTYPE/i.test(xml)) throw new SamlRequestError('a document type is not allowed');
  const problems: string[] = [];
  const doc = new DOMParser({
    errorHandler: {
      warning: () => undefined,
      error: (m) => problems.push(m),
      fatalError: (m) => problems.push(m),
    },
  }).parseFromString(xml, 'text/xml');
  if (problems.length > 0 || !doc?.documentElement)
    throw new SamlRequestError('the request is not well-formed XML');
  return doc;
}

function decodeBase64(encoded: string): Buffer {
  const compact = encoded.replace(/\s+/g, '');
  if (compact.length > MAX_ENCODED_REQUEST || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact))
    throw new SamlRequestError('SAMLRequest is not base64');
  return Buffer.from(compact, 'base64');
}

/** The XML of a SAMLRequest parameter: deflated for HTTP-Redirect, plain for HTTP-POST. */
export function requestXml(encoded: string, binding: 'redirect' | 'post'): string {
  const raw = decodeBase64(encoded);
  if (binding === 'post') return raw.toString('utf8');
  try {
    return inflateRawSync(raw, { maxOutputLength: MAX_XML_BYTES }).toString('utf8');
  } catch {
    throw new SamlRequestError('SAMLRequest does not inflate');
  }
}

export const children = (el: XElement, ns: string, local: string): XElement[] =>
  Array.from(el.childNodes).filter(
    (n): n is XElement => isElement(n) && n.namespaceURI === ns && n.localName === local,
  );

export const attr = (el: XElement, name: string): string | null =>
  el.hasAttribute(name) ? el.getAttribute(name) : null;

export function parseAuthnRequest(xml: string): AuthnRequest {
  const doc = parseXml(xml);
  const root = doc.documentElement;
  if (root.namespaceURI !== NS.protocol || root.localName !== 'AuthnRequest')
    throw new SamlRequestError('the message is not an AuthnRequest');
  const id = attr(root, 'ID');
  if (!id || id.length > 256) throw new SamlRequestError('the AuthnRequest has no usable ID');
  if (attr(root, 'Version') !== '2.0') throw new SamlRequestError('the AuthnRequest is not SAML 2.0');
  const instant = attr(root, 'IssueInstant');
  const issueInstant = instant ? new Date(instant) : null;
  if (!issueInstant || Number.isNaN(issueInstant.getTime()))
    throw new SamlRequestError('the AuthnRequest has no IssueInstant');
  const issuers = children(root, NS.assertion, 'Issuer');
  const issuer = issuers[0]?.textContent?.trim();
  if (issuers.length !== 1 || !issuer) throw new SamlRequestError('the AuthnRequest has no Issuer');
  const policy = children(root, NS.protocol, 'NameIDPolicy')[0];
  return {
    id,
    issuer,
    issueInstant,
    destination: attr(root, 'Destination'),
    acsUrl: attr(root, 'AssertionConsumerServiceURL'),
    protocolBinding: attr(root, 'ProtocolBinding'),
    nameIdFormat: policy ? attr(policy, 'Format') : null,
    forceAuthn: attr(root, 'ForceAuthn') === 'true' || attr(root, 'ForceAuthn') === '1',
    isPassive: attr(root, 'IsPassive') === 'true' || attr(root, 'IsPassive') === '1',
    xml,
    doc,
  };
}

/**
 * HTTP-POST binding: one enveloped signature, a direct child of the AuthnRequest, whose one
 * reference is the AuthnRequest itself by an ID no other element carries (signature wrapping
 * defence), made with the registered certificate.
 */
export function verifyPostSignature(req: AuthnRequest, certificatePem: string): boolean {
  const root = req.doc.documentElement;
  const signatures = Array.from(req.doc.getElementsByTagNameNS(NS.dsig, 'Signature'));
  if (signatures.length !== 1 || signatures[0]!.parentNode !== root) return false;
  const sameId = Array.from(req.doc.getElementsByTagName('*')).filter((e) => e.getAttribute('ID') === req.id);
  if (sameId.length !== 1) return false;
  const sig = new SignedXml({ publicCert: certificatePem, getCertFromKeyInfo: () => null });
  // xml-crypto is typed against the browser DOM, which this program does not load (xml-dom.ts).
  sig.loadSignature(signatures[0] as unknown as Parameters<SignedXml['loadSignature']>[0]);
  try {
    if (!sig.checkSignature(req.xml)) return false;
  } catch {
    return false;
  }
  const refs = sig.getReferences();
  if (refs.length !== 1 || refs[0]!.uri !== `#${req.id}`) return false;
  return sig.signatureAlgorithm !== RSA_SHA1;
}

// ---- the Response ------------------------------------------------------------------------------

export interface ResponseInput {
  issuer: string;
  destination: string;
  audience: string;
  inResponseTo: string | null;
  nameId: { format: string; value: string };
  sessionIndex: string;
  authnInstant: Date;
  authnContext: string;
  attributes: Record<string, string[]>;
  now: Date;
  /** How long the assertion may be presented. */
  validityMs: number;
  signer: { privateKeyPem: string; certificate: string };
  /** Encrypts the signed Assertion (saml-encrypt.ts) before the Response is signed. */
  encrypt?: (signedResponseXml: string) => Promise<string>;
}

export const samlId = () => `_${randomBytes(20).toString('hex')}`;
export const instant = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** An empty samlp:Response addressed to the SP, success or failure alike, with its new ID. */
function responseEnvelope(r: { now: Date; destination: string; inResponseTo: string | null }) {
  const doc = new DOMImplementation().createDocument(NS.protocol, 'samlp:Response', null);
  const res = doc.documentElement;
  const id = samlId();
  res.setAttribute('xmlns:saml', NS.assertion);
  res.setAttribute('ID', id);
  res.setAttribute('Version', '2.0');
  res.setAttribute('IssueInstant', instant(r.now));
  res.setAttribute('Destination', r.destination);
  if (r.inResponseTo) res.setAttribute('InResponseTo', r.inResponseTo);
  return { doc, res, id };
}

/** A success Response: signed Assertion inside a signed Response (signatures after each Issuer). */
export async function buildSignedResponse(r: ResponseInput): Promise<string> {
  const { doc, res, id: responseId } = responseEnvelope(r);
  const assertionId = samlId();
  const el = (
    parent: XElement,
    ns: string,
    name: string,
    text?: string,
    attrs: Record<string, string> = {},
  ) => {
    const e = doc.createElementNS(ns, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.appendChild(doc.createTextNode(text));
    parent.appendChild(e);
    return e;
  };
  el(res, NS.assertion, 'saml:Issuer', r.issuer);
  const status = el(res, NS.protocol, 'samlp:Status');
  el(status, NS.protocol, 'samlp:StatusCode', undefined, {
    Value: 'urn:oasis:names:tc:SAML:2.0:status:Success',
  });

  const notOnOrAfter = instant(new Date(r.now.getTime() + r.validityMs));
  const a = el(res, NS.assertion, 'saml:Assertion', undefined, {
    ID: assertionId,
    Version: '2.0',
    IssueInstant: instant(r.now),
  });
  el(a, NS.assertion, 'saml:Issuer', r.issuer);
  const subject = el(a, NS.assertion, 'saml:Subject');
  el(subject, NS.assertion, 'saml:NameID', r.nameId.value, { Format: r.nameId.format });
  const confirmation = el(subject, NS.assertion, 'saml:SubjectConfirmation', undefined, {
    Method: 'urn:oasis:names:tc:SAML:2.0:cm:bearer',
  });
  el(confirmation, NS.assertion, 'saml:SubjectConfirmationData', undefined, {
    ...(r.inResponseTo ? { InResponseTo: r.inResponseTo } : {}),
    NotOnOrAfter: notOnOrAfter,
    Recipient: r.destination,
  });
  const conditions = el(a, NS.assertion, 'saml:Conditions', undefined, {
    NotBefore: instant(new Date(r.now.getTime() - 60_000)),
    NotOnOrAfter: notOnOrAfter,
  });
  const restriction = el(conditions, NS.assertion, 'saml:AudienceRestriction');
  el(restriction, NS.assertion, 'saml:Audience', r.audience);
  const authn = el(a, NS.assertion, 'saml:AuthnStatement', undefined, {
    AuthnInstant: instant(r.authnInstant),
    SessionIndex: r.sessionIndex,
  });
  const ctx = el(authn, NS.assertion, 'saml:AuthnContext');
  el(ctx, NS.assertion, 'saml:AuthnContextClassRef', r.authnContext);
  const named = Object.entries(r.attributes).filter(([, v]) => v.length > 0);
  if (named.length > 0) {
    const statement = el(a, NS.assertion, 'saml:AttributeStatement');
    for (const [name, values] of named) {
      const at = el(statement, NS.assertion, 'saml:Attribute', undefined, {
        Name: name,
        NameFormat: 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic',
      });
      for (const v of values) el(at, NS.assertion, 'saml:AttributeValue', v);
    }
  }
  const unsigned = new XMLSerializer().serializeToString(doc);
  const assertionSigned = sign(unsigned, assertionId, 'Assertion', r.signer);
  const inner = r.encrypt ? await r.encrypt(assertionSigned) : assertionSigned;
  return sign(inner, responseId, 'Response', r.signer);
}

/** Signs the element with this ID; the signature goes right after that element's Issuer. */
function sign(
  xml: string,
  id: string,
  local: 'Assertion' | 'Response',
  signer: ResponseInput['signer'],
): string {
  const sig = new SignedXml({
    privateKey: signer.privateKeyPem,
    publicCert: signer.certificate,
    signatureAlgorithm: RSA_SHA256,
    canonicalizationAlgorithm: EXC_C14N,
  });
  sig.addReference({
    xpath: `//*[local-name(.)='${local}' and @ID='${id}']`,
    transforms: [ENVELOPED, EXC_C14N],
    digestAlgorithm: SHA256,
  });
  sig.computeSignature(xml, {
    prefix: 'ds',
    location: {
      reference: `//*[local-name(.)='${local}' and @ID='${id}']/*[local-name(.)='Issuer']`,
      action: 'after',
    },
  });
  return sig.getSignedXml();
}

/** A Response that reports a failure (no assertion), for an SP that can be answered. */
export function buildErrorResponse(r: {
  issuer: string;
  destination: string;
  inResponseTo: string | null;
  status: string;
  subStatus: string | null;
  now: Date;
  signer: ResponseInput['signer'];
}): string {
  const { doc, res, id } = responseEnvelope(r);
  const issuer = doc.createElementNS(NS.assertion, 'saml:Issuer');
  issuer.appendChild(doc.createTextNode(r.issuer));
  res.appendChild(issuer);
  const status = doc.createElementNS(NS.protocol, 'samlp:Status');
  const code = doc.createElementNS(NS.protocol, 'samlp:StatusCode');
  code.setAttribute('Value', r.status);
  if (r.subStatus) {
    const sub = doc.createElementNS(NS.protocol, 'samlp:StatusCode');
    sub.setAttribute('Value', r.subStatus);
    code.appendChild(sub);
  }
  status.appendChild(code);
  res.appendChild(status);
  return sign(new XMLSerializer().serializeToString(doc), id, 'Response', r.signer);
}

/** The realm's IdP metadata: signing certificates, SSO endpoints, NameID formats. */
export function buildMetadata(m: {
  entityId: string;
  ssoUrl: string;
  sloUrl: string;
  certificates: string[];
}): string {
  const doc = new DOMImplementation().createDocument(NS.metadata, 'md:EntityDescriptor', null);
  const root = doc.documentElement;
  root.setAttribute('entityID', m.entityId);
  root.setAttribute('xmlns:ds', NS.dsig);
  const idp = doc.createElementNS(NS.metadata, 'md:IDPSSODescriptor');
  idp.setAttribute('WantAuthnRequestsSigned', 'false');
  idp.setAttribute('protocolSupportEnumeration', NS.protocol);
  root.appendChild(idp);
  for (const cert of m.certificates) {
    const kd = doc.createElementNS(NS.metadata, 'md:KeyDescriptor');
    kd.setAttribute('use', 'signing');
    const ki = doc.createElementNS(NS.dsig, 'ds:KeyInfo');
    const data = doc.createElementNS(NS.dsig, 'ds:X509Data');
    const c = doc.createElementNS(NS.dsig, 'ds:X509Certificate');
    c.appendChild(doc.createTextNode(cert));
    data.appendChild(c);
    ki.appendChild(data);
    kd.appendChild(ki);
    idp.appendChild(kd);
  }
  const slo = doc.createElementNS(NS.metadata, 'md:SingleLogoutService');
  slo.setAttribute('Binding', BINDING.redirect);
  slo.setAttribute('Location', m.sloUrl);
  idp.appendChild(slo);
  for (const f of [...Object.values(NAME_ID_FORMAT_URI), UNSPECIFIED_FORMAT]) {
    const nf = doc.createElementNS(NS.metadata, 'md:NameIDFormat');
    nf.appendChild(doc.createTextNode(f));
    idp.appendChild(nf);
  }
  for (const binding of [BINDING.redirect, BINDING.post]) {
    const sso = doc.createElementNS(NS.metadata, 'md:SingleSignOnService');
    sso.setAttribute('Binding', binding);
    sso.setAttribute('Location', m.ssoUrl);
    idp.appendChild(sso);
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(doc)}`;
}

export { UNSPECIFIED_FORMAT };
