// Certificate-bound access tokens (RFC 8705 section 3; document 1 Authentication 8): a token whose
// cnf holds `x5t#S256` is accepted only from a request presenting the certificate with that
// SHA-256 thumbprint. Any other cnf (or a bound token without the certificate) is refused here;
// other proof-of-possession schemes are judged elsewhere.
import { timingSafeEqual } from 'node:crypto';

const THUMBPRINT = /^[A-Za-z0-9_-]{43}$/;

/** Whether `cnf` is exactly `{ "x5t#S256": thumbprint }` for the presented certificate's thumbprint. */
export function certificateConfirms(cnf: unknown, presented: string | null | undefined): boolean {
  if (typeof presented !== 'string' || typeof cnf !== 'object' || cnf === null || Array.isArray(cnf))
    return false;
  const members = Object.keys(cnf);
  if (members.length !== 1 || members[0] !== 'x5t#S256') return false;
  const bound = (cnf as Record<string, unknown>)['x5t#S256'];
  if (typeof bound !== 'string' || !THUMBPRINT.test(bound) || !THUMBPRINT.test(presented)) return false;
  return timingSafeEqual(Buffer.from(bound), Buffer.from(presented));
}
