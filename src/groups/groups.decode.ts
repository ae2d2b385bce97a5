// Strict input of the groups API (docs/api-roles.md, Groups): shape errors answer 400, values that
// break a rule 422. Metadata is bounded by limits.metadata_bytes (doc 2, Limits).

import { metadataMap } from '../organizations/organizations.decode.ts';
import { decodeBody, nullable, object, optional } from '../platform/http/decode.ts';
import { idText, invalid, plainText } from '../roles/admin-call.ts';

export function groupDecoders(metadataBytes: number) {
  const metadata = () => metadataMap(metadataBytes);
  const create = object({
    name: plainText(100, 1),
    description: optional(plainText(500)),
    parent_id: optional(idText()),
    metadata: optional(metadata()),
    external_id: optional(plainText(255, 1)),
  });
  // null clears a member; parent_id null moves the group to the top level.
  const update = object({
    name: optional(plainText(100, 1)),
    description: optional(nullable(plainText(500))),
    parent_id: optional(nullable(idText())),
    metadata: optional(nullable(metadata())),
    external_id: optional(nullable(plainText(255, 1))),
  });
  const trimmed = <T extends { name?: string }>(v: T): T => {
    if (v.name !== undefined && v.name.trim() !== v.name)
      throw invalid('name', 'pattern', 'no leading or trailing spaces');
    return v;
  };
  return {
    decodeCreate: (body: unknown) => trimmed(decodeBody(create, body)),
    decodeUpdate: (body: unknown) => trimmed(decodeBody(update, body ?? {})),
  };
}

export type GroupDecoders = ReturnType<typeof groupDecoders>;
export type CreateGroupInput = ReturnType<GroupDecoders['decodeCreate']>;
export type UpdateGroupInput = ReturnType<GroupDecoders['decodeUpdate']>;

export const MEMBER_TYPES = ['user', 'service_principal'] as const;
