// Certificate-path checks of our own (docs/passkeys.md: the ceremony library's "verified" says
// nothing about trust, and its own path check would fetch revocation lists named by the
// attacker's certificate). A path runs from the leaf through the given intermediates to one of
// the anchors; every certificate must be inside its validity period, every issuer a CA, and
// every signature must verify. Nothing here touches the network.
import { X509Certificate } from 'node:crypto';

/** PEM text or DER bytes as an X509Certificate, or null when it does not parse. */
export function parseCertificate(input: string | Uint8Array): X509Certificate | null {
  try {
    return new X509Certificate(typeof input === 'string' ? input : Buffer.from(input));
  } catch {
    return null;
  }
}

export const withinValidity = (c: X509Certificate, now: Date): boolean =>
  new Date(c.validFrom).getTime() <= now.getTime() && now.getTime() <= new Date(c.validTo).getTime();

const signedBy = (child: X509Certificate, issuer: X509Certificate): boolean =>
  issuer.ca && child.checkIssued(issuer) && child.verify(issuer.publicKey);

const MAX_DEPTH = 6;

/** True when `leaf`, helped by `intermediates`, chains to one of `anchors` at `now`. */
export function chainsTo(
  leaf: X509Certificate,
  intermediates: readonly X509Certificate[],
  anchors: readonly X509Certificate[],
  now: Date,
): boolean {
  const liveAnchors = anchors.filter((a) => a.ca && withinValidity(a, now));
  let current = leaf;
  const used = new Set<X509Certificate>();
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    if (!withinValidity(current, now)) return false;
    if (liveAnchors.some((a) => a.raw.equals(current.raw) && depth > 0)) return true;
    if (liveAnchors.some((a) => signedBy(current, a))) return true;
    const next = intermediates.find((i) => !used.has(i) && withinValidity(i, now) && signedBy(current, i));
    if (!next) return false;
    used.add(next);
    current = next;
  }
  return false;
}
