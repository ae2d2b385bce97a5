// Bodies of the access review API (docs/access-reviews.md).
import { array, type Decoded, enumOf, object, optional, string } from '../platform/http/decode.ts';
import { plainText } from '../roles/admin-call.ts';

const RFC3339 = /\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})/;

export const decodeNewReview = object({
  name: plainText(200, 1),
  scope: object({
    type: enumOf(['role', 'organization'] as const),
    id: string({ pattern: /(rol|org)_[0-9a-z]{26}/ }),
  }),
  reviewer_ids: array(string({ pattern: /usr_[0-9a-z]{26}/ }), { minItems: 1, maxItems: 20, unique: true }),
  ends_at: string({ pattern: RFC3339 }),
  default_decision: optional(enumOf(['keep', 'remove'] as const), 'keep'),
});
export type NewReview = Decoded<typeof decodeNewReview>;

export const decodeDecision = object({
  decision: enumOf(['keep', 'remove'] as const),
  reason: optional(plainText(500, 1)),
});
