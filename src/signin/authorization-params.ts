// The parameters of an authorization request (RFC 6749 section 4.1.1, OpenID Connect Core 3.1.2.1,
// RFC 8707, RFC 9101, RFC 9126) read into a StartInput: the same reader for the authorization
// endpoint's query and the PAR endpoint's form body.
import { camelCase } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import type { StartInput } from './start.ts';

export const SINGLE_PARAMS = [
  'acr_values',
  'claims',
  'client_id',
  'code_challenge',
  'code_challenge_method',
  'intent',
  'login_hint',
  'max_age',
  'nonce',
  'organization',
  'prompt',
  'redirect_uri',
  'request',
  'request_uri',
  'response_mode',
  'response_type',
  'scope',
  'state',
  'ui_locales',
] as const;
export type SingleParam = (typeof SINGLE_PARAMS)[number];

/**
 * The values of each parameter by name: an empty value counts as absent, a repeated parameter
 * (other than resource) is refused (RFC 6749 section 3.1).
 */
export function startInputFrom(values: (name: string) => readonly string[]): StartInput {
  const one = (name: SingleParam): string | undefined => {
    const v = values(name);
    if (v.length > 1) throw problem.invalidRequest(`parameter ${name} is repeated`);
    return v[0] === '' ? undefined : v[0];
  };
  const maxAge = one('max_age');
  if (maxAge !== undefined && !/^\d{1,9}$/.test(maxAge))
    throw problem.invalidRequest('max_age must be a non-negative integer');
  const input: StartInput = { resource: [...values('resource')] };
  const fields = input as Record<string, unknown>;
  for (const name of SINGLE_PARAMS) {
    const value = one(name);
    if (value !== undefined) fields[camelCase(name)] = name === 'max_age' ? Number(value) : value;
  }
  return input;
}
