// Request objects (RFC 9101; OpenID Connect Core 6.1): the authorization request as a JWT the
// client signs with a key of its registered key set (the one private_key_jwt uses). Checked here:
// a real signature (never alg none), iss the client, aud this realm's issuer, a required and short
// exp. Its parameters then replace those sent beside it.
import {
  createLocalJWKSet,
  decodeProtectedHeader,
  type JSONWebKeySet,
  type JWTPayload,
  jwtVerify,
} from 'jose';
import { CLIENT_SIGNING_ALGORITHMS } from '../clients/index.ts';
import { camelCase } from '../platform/http/decode.ts';
import { SINGLE_PARAMS } from './authorization-params.ts';
import type { StartInput } from './start.ts';

/** Longest time before `exp` a request object may be presented (docs/oauth-endpoints.md). */
export const MAX_REQUEST_OBJECT_LIFETIME_SECONDS = 600;

/** Why a request object was refused: answered as invalid_request_object. */
export class RequestObjectError extends Error {}

export interface RequestObjectContext {
  clientId: string;
  jwks: JSONWebKeySet | null;
  issuer: string;
  now: Date;
  clockSkewSeconds: number;
}

function unsigned(jwt: string): boolean {
  try {
    return decodeProtectedHeader(jwt).alg?.toLowerCase() === 'none';
  } catch {
    throw new RequestObjectError('the request object is not a JWT');
  }
}

export async function verifyRequestObject(jwt: string, c: RequestObjectContext): Promise<JWTPayload> {
  if (unsigned(jwt)) throw new RequestObjectError('unsigned request objects are refused');
  if (!c.jwks || !Array.isArray(c.jwks.keys) || c.jwks.keys.length === 0)
    throw new RequestObjectError('the client has no registered keys to verify a request object with');
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(jwt, createLocalJWKSet(c.jwks), {
      algorithms: CLIENT_SIGNING_ALGORITHMS,
      issuer: c.clientId,
      audience: c.issuer,
      requiredClaims: ['exp'],
      clockTolerance: c.clockSkewSeconds,
      currentDate: c.now,
    }));
  } catch (e) {
    const code = (e as { code?: string }).code ?? 'ERR_INVALID';
    throw new RequestObjectError(`the request object failed verification (${code})`);
  }
  const exp = payload.exp as number;
  if (exp - c.now.getTime() / 1000 > MAX_REQUEST_OBJECT_LIFETIME_SECONDS + c.clockSkewSeconds)
    throw new RequestObjectError(`exp is more than ${MAX_REQUEST_OBJECT_LIFETIME_SECONDS} seconds away`);
  if (payload.client_id !== undefined && payload.client_id !== c.clientId)
    throw new RequestObjectError('client_id in the request object differs from the one sent with it');
  if (payload.request !== undefined || payload.request_uri !== undefined)
    throw new RequestObjectError('a request object cannot carry request or request_uri');
  return payload;
}

const asText = (name: string, v: unknown): string => {
  if (typeof v !== 'string') throw new RequestObjectError(`${name} in the request object must be a string`);
  return v;
};

function asResource(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
  throw new RequestObjectError('resource in the request object must be a string or an array of strings');
}

function asMaxAge(v: unknown): number {
  const n = typeof v === 'string' && /^\d{1,9}$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
    throw new RequestObjectError('max_age in the request object must be a non-negative integer');
  return n;
}

// OpenID Connect Core 6.1: claims is a JSON object inside a request object, text outside one.
function asClaims(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return JSON.stringify(v);
  throw new RequestObjectError('claims in the request object must be a JSON object');
}

/**
 * The request with the object's parameters in place of those sent beside it (OpenID Connect
 * Core 6.3.3); JWT claims that are no authorization parameters (iss, aud, exp, ...) are not read.
 */
export function withRequestObjectParams(input: StartInput, payload: JWTPayload): StartInput {
  const { request: _request, ...rest } = input;
  const out: StartInput = rest;
  const fields = out as Record<string, unknown>;
  for (const name of SINGLE_PARAMS) {
    const v = payload[name];
    if (v === undefined || name === 'request' || name === 'request_uri' || name === 'client_id') continue;
    fields[camelCase(name)] =
      name === 'max_age' ? asMaxAge(v) : name === 'claims' ? asClaims(v) : asText(name, v);
  }
  if (payload.resource !== undefined) out.resource = asResource(payload.resource);
  return out;
}
