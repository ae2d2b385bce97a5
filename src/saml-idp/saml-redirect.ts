// The HTTP-Redirect binding (SAML Bindings 3.4): a message deflated and base64-encoded into the
// query, signed over the query's own encoded SAMLRequest or SAMLResponse, RelayState and SigAlg
// (3.4.4.1). The signature is the query's, not the XML's, so nothing here touches signed XML.
import { createSign, createVerify } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { RSA_SHA256 } from './saml-xml.ts';

export type RedirectMessage = 'SAMLRequest' | 'SAMLResponse';

/** The raw (still encoded) value of a parameter given exactly once, else null. */
function rawParam(rawQuery: string, name: string): string | null {
  const found = rawQuery
    .split('&')
    .map((p) => {
      const i = p.indexOf('=');
      return i < 0 ? [p, ''] : [p.slice(0, i), p.slice(i + 1)];
    })
    .filter(([k]) => k === name);
  return found.length === 1 ? found[0]![1]! : null;
}

const decodeQueryValue = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));

/** Checks the query's signature by this certificate (RSA-SHA256 only), exactly as sent. */
export function verifyRedirectSignature(
  rawQuery: string,
  certificatePem: string,
  message: RedirectMessage = 'SAMLRequest',
): boolean {
  const body = rawParam(rawQuery, message);
  const sigAlg = rawParam(rawQuery, 'SigAlg');
  const signature = rawParam(rawQuery, 'Signature');
  if (body === null || sigAlg === null || signature === null) return false;
  try {
    if (decodeQueryValue(sigAlg) !== RSA_SHA256) return false;
    const relay = rawParam(rawQuery, 'RelayState');
    const signed = [
      `${message}=${body}`,
      ...(relay !== null ? [`RelayState=${relay}`] : []),
      `SigAlg=${sigAlg}`,
    ].join('&');
    return createVerify('RSA-SHA256')
      .update(signed)
      .verify(certificatePem, Buffer.from(decodeQueryValue(signature), 'base64'));
  } catch {
    return false;
  }
}

/** Whether the query carries a signature at all (Signature or SigAlg). */
export const redirectIsSigned = (rawQuery: string) => /(^|&)(Signature|SigAlg)=/.test(rawQuery);

/** The URL that carries this message to `destination`, signed with the IdP's SAML key. */
export function signedRedirectUrl(
  destination: string,
  message: RedirectMessage,
  xml: string,
  relayState: string | null,
  signer: { privateKeyPem: string },
): string {
  const query = [
    `${message}=${encodeURIComponent(deflateRawSync(Buffer.from(xml, 'utf8')).toString('base64'))}`,
    ...(relayState !== null ? [`RelayState=${encodeURIComponent(relayState)}`] : []),
    `SigAlg=${encodeURIComponent(RSA_SHA256)}`,
  ].join('&');
  const signature = createSign('RSA-SHA256').update(query).sign(signer.privateKeyPem, 'base64');
  const url = new URL(destination);
  return `${destination}${url.search ? '&' : '?'}${query}&Signature=${encodeURIComponent(signature)}`;
}
