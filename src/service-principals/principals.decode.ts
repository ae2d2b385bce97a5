// Strict input of the service principals API (docs/api-roles.md, Service principals).
import { array, boolean, decodeBody, nullable, object, optional } from '../platform/http/decode.ts';
import { idText, invalid, plainText } from '../roles/admin-call.ts';

// null: any organization; []: none.
const organizations = () => nullable(array(idText(), { maxItems: 1000, unique: true }));

const createShape = object({
  name: plainText(100, 1),
  description: optional(plainText(500)),
  owner_user_id: optional(idText()),
  owner_organization_id: optional(idText()),
  allowed_organization_ids: optional(organizations()),
  is_agent: optional(boolean()),
});
const updateShape = object({
  name: optional(plainText(100, 1)),
  description: optional(nullable(plainText(500))),
  allowed_organization_ids: optional(organizations()),
  is_agent: optional(boolean()),
});

const trimmed = <T extends { name?: string }>(v: T): T => {
  if (v.name !== undefined && v.name.trim() !== v.name)
    throw invalid('name', 'pattern', 'no leading or trailing spaces');
  return v;
};

export const decodeCreatePrincipal = (body: unknown) => trimmed(decodeBody(createShape, body));
export const decodeUpdatePrincipal = (body: unknown) => trimmed(decodeBody(updateShape, body ?? {}));
export type CreatePrincipalInput = ReturnType<typeof decodeCreatePrincipal>;
export type UpdatePrincipalInput = ReturnType<typeof decodeUpdatePrincipal>;
