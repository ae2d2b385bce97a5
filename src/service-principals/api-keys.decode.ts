// Strict input of the API keys API (docs/api-keys.md).
import { decodeBody, object, optional, refine, string } from '../platform/http/decode.ts';
import { idText, plainText } from '../roles/admin-call.ts';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

const createShape = object({
  service_principal_id: idText(),
  name: plainText(100, 1),
  expires_at: optional(
    refine(
      string({ maxLength: 64 }),
      (v) => (RFC3339.test(v) && !Number.isNaN(Date.parse(v)) ? null : 'an RFC 3339 date-time'),
      'format',
    ),
  ),
});

export const decodeCreateApiKey = (body: unknown) => decodeBody(createShape, body);
export type CreateApiKeyInput = ReturnType<typeof decodeCreateApiKey>;
