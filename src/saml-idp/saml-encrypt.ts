// Encrypted assertions (SAML Core 2.3.4, XML Encryption 1.1; docs/saml-idp.md, The Response) for an
// SP that registered an encryption certificate: the signed Assertion is encrypted whole with
// AES-256-GCM under a fresh key, which is itself encrypted to the SP's RSA key with RSA-OAEP, by
// xml-encryption (the library node-saml decrypts with). The Response is signed afterwards.

import { X509Certificate } from 'node:crypto';
import { createRequire } from 'node:module';
import { NS, parseXml } from './saml-xml.ts';
import { isElement, type XElement, xmldom } from './xml-dom.ts';

const AES256_GCM = 'http://www.w3.org/2009/xmlenc11#aes256-gcm';
const RSA_OAEP = 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p';

// xml-encryption's declarations bring in nothing of the DOM, but it is CommonJS with a callback API.
const xmlenc = createRequire(import.meta.url)('xml-encryption') as {
  encrypt(
    content: string,
    options: Record<string, unknown>,
    callback: (err: Error | null, result?: string) => void,
  ): void;
};

const encrypt = (content: string, certificatePem: string) =>
  new Promise<string>((resolve, reject) =>
    xmlenc.encrypt(
      content,
      {
        rsa_pub: new X509Certificate(certificatePem).publicKey.export({ type: 'spki', format: 'pem' }),
        pem: certificatePem,
        encryptionAlgorithm: AES256_GCM,
        keyEncryptionAlgorithm: RSA_OAEP,
        disallowEncryptionWithInsecureAlgorithm: true,
        warnInsecureAlgorithm: false,
      },
      (err, result) =>
        err || result === undefined ? reject(err ?? new Error('no result')) : resolve(result),
    ),
  );

/** The Response with its (signed) Assertion replaced by an EncryptedAssertion to this certificate. */
export async function encryptAssertion(responseXml: string, certificatePem: string): Promise<string> {
  const doc = parseXml(responseXml);
  const response = doc.documentElement;
  const assertions = Array.from(response.childNodes).filter(
    (n): n is XElement => isElement(n) && n.namespaceURI === NS.assertion && n.localName === 'Assertion',
  );
  if (assertions.length !== 1) throw new Error('a Response with one Assertion is expected');
  const assertion = assertions[0]!;
  // Serialized alone, the Assertion declares the namespaces its names use (xmldom adds them).
  const encryptedData = parseXml(
    await encrypt(new xmldom.XMLSerializer().serializeToString(assertion), certificatePem),
  );
  const wrapper = doc.createElementNS(NS.assertion, 'saml:EncryptedAssertion');
  wrapper.appendChild(doc.importNode(encryptedData.documentElement, true));
  response.replaceChild(wrapper, assertion);
  return new xmldom.XMLSerializer().serializeToString(doc);
}

/** What encrypts a Response's assertion for an SP with this certificate; null: none. */
export const encrypterFor = (certificatePem: string | null) =>
  certificatePem === null ? null : (xml: string) => encryptAssertion(xml, certificatePem);
