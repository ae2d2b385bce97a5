// Request bodies of the provisioning target endpoints (docs/provisioning.md, API). Unknown
// members are 400; values that break a rule are 422 on their field.
import { boolean, enumOf, object, optional, string } from '../platform/http/decode.ts';
import { plainText } from '../roles/admin-call.ts';
import { MAX_URL_CHARS } from '../webhooks/webhook-destination.ts';

export const TARGET_STATES = ['active', 'paused'] as const;

/** A bearer credential as directories issue them (opaque tokens, JWTs): printable ASCII. */
const credential = () => string({ minLength: 1, maxLength: 4096, pattern: /[\x21-\x7e]+/ });
const baseUrl = () => string({ minLength: 1, maxLength: MAX_URL_CHARS });

export const createTargetBody = object({
  name: plainText(100, 1),
  base_url: baseUrl(),
  bearer_token: credential(),
  allow_private_network: optional(boolean(), false),
  push: optional(boolean(), true),
});

export const patchTargetBody = object({
  name: optional(plainText(100, 1)),
  base_url: optional(baseUrl()),
  bearer_token: optional(credential()),
  allow_private_network: optional(boolean()),
  push: optional(boolean()),
  state: optional(enumOf(TARGET_STATES)),
});
