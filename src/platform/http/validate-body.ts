// Strict request bodies of the administration APIs: a body of the wrong shape (unknown members,
// wrong JSON types, repeated members) is a bad request (decision D10); a body of the right
// shape whose values break a rule is a validation failure.
import { type Decoder, tryDecode } from './decode.ts';
import { problem } from './problem.ts';

const SHAPE_CODES = new Set(['unknown_member', 'duplicate', 'type']);

/** 400 invalid_request when the shape is wrong, 422 validation_failed otherwise. */
export function decodeOrValidate<T>(decoder: Decoder<T>, body: unknown): T {
  const r = tryDecode(decoder, body);
  if (r.ok) return r.value;
  if (r.errors.some((e) => SHAPE_CODES.has(e.code)))
    throw problem.invalidRequest('request body has invalid members', r.errors);
  throw problem.validation(r.errors);
}
