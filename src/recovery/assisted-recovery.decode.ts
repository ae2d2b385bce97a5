// Strict input of the assisted recovery endpoints (document 1 "Recovery and account
// administration": {reason, evidence_reference, reset_mfa}). Shape errors answer 400
// invalid_request, values that break a rule 422.
import { boolean, decodeBody, object, optional, string } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { MIN_PASSWORD_LENGTH } from '../users/password-rules.ts';
import type { RecoveryRequestInput } from './assisted-recovery.service.ts';

const requestShape = object({
  reason: string({ minLength: 1, maxLength: 500 }),
  evidence_reference: optional(string({ minLength: 1, maxLength: 255 })),
  reset_mfa: optional(boolean(), false),
});

export function decodeRecoveryRequest(body: unknown): RecoveryRequestInput {
  const r = decodeBody(requestShape, body);
  return { reason: r.reason, evidenceReference: r.evidenceReference ?? null, resetMfa: r.resetMfa };
}

// The setup token is 32 random bytes in base64url (43 characters).
const setupShape = object({
  token: string({ minLength: 1, maxLength: 128 }),
  password: string({ minLength: MIN_PASSWORD_LENGTH, maxBytes: 1024 }),
});

export const decodeRecoverySetup = (body: unknown) => decodeBody(setupShape, body);

const RECOVERY_ID = /^arc_[0-9a-z]{26}$/;

/** Ids that cannot exist are not found; they never reach SQL. */
export function recoveryIdParam(raw: string): string {
  if (!RECOVERY_ID.test(raw)) throw problem.notFound('no such assisted recovery');
  return raw;
}
