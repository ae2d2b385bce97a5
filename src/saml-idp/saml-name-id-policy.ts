// The NameIDPolicy of an AuthnRequest (SAML Core 3.4.1.1; docs/saml-idp.md, The Response): the
// format an SP asks for is used when its SAML client allows it; no format, or `unspecified`, means
// the registered one. A format the client does not allow is answered at once with a signed
// Response of status InvalidNameIDPolicy, and no sign-in starts.
import type { NameIdFormat, SamlSettings } from '../clients/index.ts';
import { activeSamlSigner } from '../keys/saml-keys.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db } from '../platform/db/db.ts';
import type { RealmRow } from '../realms/index.ts';
import { buildErrorResponse, NAME_ID_FORMAT_URI, UNSPECIFIED_FORMAT } from './saml-xml.ts';

const FORMAT_OF_URI = new Map<string, NameIdFormat>(
  Object.entries(NAME_ID_FORMAT_URI).map(([k, uri]) => [uri, k as NameIdFormat]),
);

/** The format to use (null: the registered one), or 'refused'. */
export function requestedFormat(uri: string | null, s: SamlSettings): NameIdFormat | null | 'refused' {
  if (uri === null || uri === UNSPECIFIED_FORMAT) return null;
  const format = FORMAT_OF_URI.get(uri);
  return format && s.allowedNameIdFormats.includes(format) ? format : 'refused';
}

/** The signed InvalidNameIDPolicy Response to the (checked) ACS URL, as the POST form's content. */
export async function invalidPolicyAnswer(
  deps: { db: Db; keyring: RootKeyring; now: Date },
  realm: RealmRow,
  r: { issuer: string; acsUrl: string; requestId: string; relayState: string | null },
) {
  const xml = buildErrorResponse({
    issuer: r.issuer,
    destination: r.acsUrl,
    inResponseTo: r.requestId,
    status: 'urn:oasis:names:tc:SAML:2.0:status:Requester',
    subStatus: 'urn:oasis:names:tc:SAML:2.0:status:InvalidNameIDPolicy',
    now: deps.now,
    signer: await activeSamlSigner(deps.db, deps.keyring, realm, deps.now),
  });
  return {
    acsUrl: r.acsUrl,
    samlResponse: Buffer.from(xml, 'utf8').toString('base64'),
    relayState: r.relayState,
  };
}
