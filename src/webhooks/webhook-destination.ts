// Destination rules of a subscription (spec doc 2, Delivery semantics 3; Webhook subscription):
// an absolute http(s) URL written in its canonical form, https in production, and every address
// its host resolves to allowed by the egress guard of the subscription, and the host within the
// operator's residency list when there is one. Both are applied again before every delivery (the
// guard at every connection, by the outbound client).
import { isIP } from 'node:net';
import type { Environment } from '../platform/config/settings.ts';
import { problem } from '../platform/http/problem.ts';
import { EgressGuard, type EgressPolicy, STRICT_EGRESS } from '../platform/net/egress-guard.ts';
import type { Resolver } from '../platform/net/outbound-http.ts';
import { residencyAllows } from '../platform/net/residency.ts';

export const MAX_URL_CHARS = 2048;

export interface DeliveryPolicy {
  environment: Environment;
  /** delivery.egress_allowlist */
  egressAllowlist: readonly string[];
  /** delivery.allow_private_webhooks (refused in production by the configuration loader) */
  allowPrivateWebhooks: boolean;
  /** privacy.residency.allowed_destinations (normalized patterns; empty: no residency rule) */
  allowedDestinations: readonly string[];
}

/** The residency rule on a destination's host, or null when it may be reached. */
export function residencyProblem(url: string, p: DeliveryPolicy): DestinationProblem | null {
  return residencyAllows(new URL(url).hostname, p.allowedDestinations)
    ? null
    : { code: 'egress_denied', detail: 'the host is outside privacy.residency.allowed_destinations' };
}

/** Whether the operator lets subscriptions ask for private networks at all. */
export const operatorAllowsPrivate = (p: DeliveryPolicy): boolean =>
  p.egressAllowlist.length > 0 || (p.allowPrivateWebhooks && p.environment !== 'production');

/** The guard a subscription's deliveries pass: strict unless it asked for private networks. */
export function guardFor(p: DeliveryPolicy, allowPrivateNetwork: boolean): EgressGuard {
  if (!allowPrivateNetwork || !operatorAllowsPrivate(p)) return new EgressGuard(STRICT_EGRESS);
  const policy: EgressPolicy = {
    allowlist: p.egressAllowlist,
    allowPrivate: p.allowPrivateWebhooks && p.environment !== 'production',
  };
  return new EgressGuard(policy);
}

export interface DestinationProblem {
  code: 'invalid_url' | 'https_required' | 'egress_denied' | 'unresolvable';
  detail: string;
}

/** The URL's shape alone, checked on the raw string before anything is resolved. */
export function urlShapeProblem(raw: string, environment: Environment): DestinationProblem | null {
  const bad = (detail: string): DestinationProblem => ({ code: 'invalid_url', detail });
  if (raw.length > MAX_URL_CHARS) return bad(`at most ${MAX_URL_CHARS} characters`);
  if (/[\s\\\p{Cc}]/u.test(raw)) return bad('no spaces, backslashes or control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return bad('an absolute http or https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return bad('an absolute http or https URL');
  if (url.username || url.password) return bad('no user information');
  if (raw.includes('#')) return bad('no fragment');
  // The parser rewrites numeric hosts (127.1), dot segments and case: only a URL already in its
  // canonical form is accepted, so what is stored is what is dialled.
  if (url.href !== raw && url.href !== `${raw}/`) return bad('write the URL in its canonical form');
  if (environment === 'production' && url.protocol !== 'https:')
    return { code: 'https_required', detail: 'https is required in production' };
  return null;
}

/** The whole rule: shape, then every resolved address through the guard. */
export async function destinationProblem(
  raw: string,
  policy: DeliveryPolicy,
  allowPrivateNetwork: boolean,
  resolve: Resolver,
): Promise<DestinationProblem | null> {
  const shape = urlShapeProblem(raw, policy.environment) ?? residencyProblem(raw, policy);
  if (shape) return shape;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
  const guard = guardFor(policy, allowPrivateNetwork);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await resolve(host)).map((a) => a.address);
    } catch {
      return { code: 'unresolvable', detail: 'the host name does not resolve' };
    }
    if (addresses.length === 0) return { code: 'unresolvable', detail: 'the host name does not resolve' };
  }
  for (const a of addresses) {
    const v = guard.check(a);
    if (!v.allowed)
      return { code: 'egress_denied', detail: `the destination resolves to a refused address (${v.reason})` };
  }
  return null;
}

/**
 * The whole rule as a request's 422: private egress asked for where the operator allows none, or
 * the destination's problem, named on `field` (a subscription's destination_url, a hook's url, a
 * provisioning target's base_url).
 */
export async function assertDestination(
  deps: { policy: DeliveryPolicy; resolver: Resolver },
  raw: string,
  allowPrivateNetwork: boolean,
  field: string,
): Promise<void> {
  if (allowPrivateNetwork && !operatorAllowsPrivate(deps.policy))
    throw problem.validation(
      [
        {
          field: 'allow_private_network',
          code: 'not_allowed',
          detail: 'the operator does not allow private egress',
        },
      ],
      'the operator does not allow private egress',
    );
  const p = await destinationProblem(raw, deps.policy, allowPrivateNetwork, deps.resolver);
  if (p) throw problem.validation([{ field, code: p.code, detail: p.detail }], p.detail);
}
