// SAML 2.0 single logout messages (SAML Core 3.7, Profiles 4.4) of the identity provider
// (docs/saml-idp.md, Single logout): LogoutRequest and LogoutResponse, read and built through a
// DOM. They travel by the HTTP-Redirect binding, whose signature is over the query
// (saml-redirect.ts), so these messages carry no XML signature.
import { attr, children, instant, NS, parseXml, SamlRequestError, samlId } from './saml-xml.ts';
import { xmldom } from './xml-dom.ts';

const { DOMImplementation, XMLSerializer } = xmldom;

export const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';

interface LogoutMessage {
  id: string;
  issuer: string;
  issueInstant: Date;
  destination: string | null;
}

export interface LogoutRequest extends LogoutMessage {
  nameId: string;
  notOnOrAfter: Date | null;
  sessionIndexes: string[];
}

export interface LogoutResponse extends LogoutMessage {
  inResponseTo: string | null;
  status: string | null;
}

const dateOf = (v: string | null): Date | null => {
  const d = v ? new Date(v) : null;
  return d && !Number.isNaN(d.getTime()) ? d : null;
};

/** The common head of both messages: protocol namespace, ID, version, instant, one Issuer. */
function readHead(xml: string, local: 'LogoutRequest' | 'LogoutResponse') {
  const root = parseXml(xml).documentElement;
  if (root.namespaceURI !== NS.protocol || root.localName !== local)
    throw new SamlRequestError(`the message is not a ${local}`);
  const id = attr(root, 'ID');
  if (!id || id.length > 256) throw new SamlRequestError(`the ${local} has no usable ID`);
  if (attr(root, 'Version') !== '2.0') throw new SamlRequestError(`the ${local} is not SAML 2.0`);
  const issueInstant = dateOf(attr(root, 'IssueInstant'));
  if (!issueInstant) throw new SamlRequestError(`the ${local} has no IssueInstant`);
  const issuers = children(root, NS.assertion, 'Issuer');
  const issuer = issuers[0]?.textContent?.trim();
  if (issuers.length !== 1 || !issuer) throw new SamlRequestError(`the ${local} has no Issuer`);
  const head: LogoutMessage = { id, issuer, issueInstant, destination: attr(root, 'Destination') };
  return { root, head };
}

export function parseLogoutRequest(xml: string): LogoutRequest {
  const { root, head } = readHead(xml, 'LogoutRequest');
  const nameIds = children(root, NS.assertion, 'NameID');
  const nameId = nameIds[0]?.textContent?.trim();
  // An encrypted identifier (EncryptedID) or none at all names nobody this IdP can find.
  if (nameIds.length !== 1 || !nameId) throw new SamlRequestError('the LogoutRequest has no NameID');
  const notOnOrAfter = attr(root, 'NotOnOrAfter');
  if (notOnOrAfter !== null && !dateOf(notOnOrAfter))
    throw new SamlRequestError('the NotOnOrAfter is not a time');
  const sessionIndexes = children(root, NS.protocol, 'SessionIndex').map((e) => e.textContent?.trim() ?? '');
  if (sessionIndexes.length > 20 || sessionIndexes.some((s) => s === '' || s.length > 256))
    throw new SamlRequestError('the SessionIndex values are not usable');
  return { ...head, nameId, notOnOrAfter: dateOf(notOnOrAfter), sessionIndexes };
}

export function parseLogoutResponse(xml: string): LogoutResponse {
  const { root, head } = readHead(xml, 'LogoutResponse');
  const code = children(root, NS.protocol, 'Status')[0];
  const value = code ? children(code, NS.protocol, 'StatusCode')[0] : undefined;
  return {
    ...head,
    inResponseTo: attr(root, 'InResponseTo'),
    status: value ? attr(value, 'Value') : null,
  };
}

/** A new message element with ID, Version, IssueInstant, Destination and Issuer. */
function envelope(local: string, m: { issuer: string; destination: string; now: Date }) {
  const doc = new DOMImplementation().createDocument(NS.protocol, `samlp:${local}`, null);
  const root = doc.documentElement;
  root.setAttribute('xmlns:saml', NS.assertion);
  root.setAttribute('ID', samlId());
  root.setAttribute('Version', '2.0');
  root.setAttribute('IssueInstant', instant(m.now));
  root.setAttribute('Destination', m.destination);
  const issuer = doc.createElementNS(NS.assertion, 'saml:Issuer');
  issuer.appendChild(doc.createTextNode(m.issuer));
  root.appendChild(issuer);
  return { doc, root };
}

/** A LogoutRequest to an SP for the session it was signed in to. */
export function buildLogoutRequest(m: {
  issuer: string;
  destination: string;
  now: Date;
  validityMs: number;
  nameId: { format: string; value: string };
  sessionIndex: string;
}): string {
  const { doc, root } = envelope('LogoutRequest', m);
  root.setAttribute('NotOnOrAfter', instant(new Date(m.now.getTime() + m.validityMs)));
  const nameId = doc.createElementNS(NS.assertion, 'saml:NameID');
  nameId.setAttribute('Format', m.nameId.format);
  nameId.appendChild(doc.createTextNode(m.nameId.value));
  root.appendChild(nameId);
  const index = doc.createElementNS(NS.protocol, 'samlp:SessionIndex');
  index.appendChild(doc.createTextNode(m.sessionIndex));
  root.appendChild(index);
  return new XMLSerializer().serializeToString(doc);
}

/** The LogoutResponse to an SP's LogoutRequest. */
export function buildLogoutResponse(m: {
  issuer: string;
  destination: string;
  now: Date;
  inResponseTo: string;
  status: string;
}): string {
  const { doc, root } = envelope('LogoutResponse', m);
  root.setAttribute('InResponseTo', m.inResponseTo);
  const status = doc.createElementNS(NS.protocol, 'samlp:Status');
  const code = doc.createElementNS(NS.protocol, 'samlp:StatusCode');
  code.setAttribute('Value', m.status);
  status.appendChild(code);
  root.appendChild(status);
  return new XMLSerializer().serializeToString(doc);
}
