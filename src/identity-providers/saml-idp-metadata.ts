// What a SAML connection reads from its IdP's metadata (docs/federation.md, SAML): the entity id,
// the single sign-on service of the HTTP-Redirect binding, and the signing certificates. The
// metadata is configuration an administrator chose (uploaded, or fetched from the URL they named
// through the egress guard); its own signature, when it has one, is not checked. Responses are
// never read this way: their signatures are node-saml's job (federation/saml-sp.ts).
import { createRequire } from 'node:module';
import { normalCertificate } from './saml-sp-keys.ts';

/** The little of a DOM node this file reads. */
interface XmlNode {
  nodeValue: string | null;
  getAttribute?(name: string): string | null;
}

// Loaded untyped on purpose: the typings of @xmldom/xmldom and xpath pull the browser DOM library
// into the whole program (its fetch and Crypto types then clash with Node's).
const load = createRequire(import.meta.url);
const { DOMParser } = load('@xmldom/xmldom') as {
  DOMParser: new (o: {
    errorHandler: Record<string, () => void>;
  }) => {
    parseFromString(xml: string, type: string): { documentElement: XmlNode | null } | undefined;
  };
};
const xpath = load('xpath') as {
  useNamespaces(ns: Record<string, string>): (expr: string, node: unknown) => XmlNode[];
};

export const MAX_METADATA_BYTES = 512 * 1024;

const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

export interface IdpMetadata {
  entityId: string;
  ssoUrl: string;
  certificates: string[];
}

const select = xpath.useNamespaces({
  md: 'urn:oasis:names:tc:SAML:2.0:metadata',
  ds: 'http://www.w3.org/2000/09/xmldsig#',
});

const attr = (n: XmlNode | undefined, name: string): string | null => n?.getAttribute?.(name) ?? null;

/** The IdP's entity, or a sentence saying what is missing. */
export function parseIdpMetadata(xml: string): IdpMetadata | string {
  if (Buffer.byteLength(xml) > MAX_METADATA_BYTES) return 'the metadata is larger than 512 KiB';
  // A document type declaration is where entity expansion attacks live; metadata needs none.
  if (/<!DOCTYPE/i.test(xml)) return 'metadata with a document type declaration is not read';
  let failed = false;
  const doc = new DOMParser({
    errorHandler: {
      warning: () => undefined,
      error: () => {
        failed = true;
      },
      fatalError: () => {
        failed = true;
      },
    },
  }).parseFromString(xml, 'text/xml');
  if (failed || !doc?.documentElement) return 'the metadata is not well-formed XML';
  const entities = select('//md:EntityDescriptor[md:IDPSSODescriptor]', doc);
  if (entities.length !== 1) return 'the metadata describes no single SAML identity provider';
  const entity = entities[0];
  const entityId = attr(entity, 'entityID');
  if (!entityId) return 'the identity provider has no entityID';
  const sso = select('md:IDPSSODescriptor/md:SingleSignOnService', entity).find(
    (n) => attr(n, 'Binding') === REDIRECT_BINDING,
  );
  const ssoUrl = attr(sso, 'Location');
  if (!ssoUrl) return 'the identity provider has no HTTP-Redirect single sign-on service';
  const keys = select('md:IDPSSODescriptor/md:KeyDescriptor', entity);
  const certificates: string[] = [];
  for (const k of keys) {
    const use = attr(k, 'use');
    if (use !== null && use !== 'signing') continue;
    for (const c of select('ds:KeyInfo/ds:X509Data/ds:X509Certificate/text()', k)) {
      const pem = normalCertificate(String(c.nodeValue ?? ''));
      if (pem && !certificates.includes(pem)) certificates.push(pem);
    }
  }
  if (certificates.length === 0) return 'the identity provider names no signing certificate';
  return { entityId, ssoUrl, certificates };
}
