// Strict input of the projects API (docs/api-roles.md, Projects).
import { decodeBody, enumOf, nullable, object, optional } from '../platform/http/decode.ts';
import { idText, invalid, plainText } from '../roles/admin-call.ts';

export const ENVIRONMENTS = ['development', 'staging', 'production'] as const;

const createShape = object({
  name: plainText(100, 1),
  description: optional(plainText(500)),
  environment: optional(enumOf(ENVIRONMENTS)),
  owner_user_id: optional(idText()),
  owner_organization_id: optional(idText()),
});
// The owner organization is where the project lives; it does not move.
const updateShape = object({
  name: optional(plainText(100, 1)),
  description: optional(nullable(plainText(500))),
  environment: optional(enumOf(ENVIRONMENTS)),
  owner_user_id: optional(nullable(idText())),
});

const trimmed = <T extends { name?: string }>(v: T): T => {
  if (v.name !== undefined && v.name.trim() !== v.name)
    throw invalid('name', 'pattern', 'no leading or trailing spaces');
  return v;
};

export const decodeCreateProject = (body: unknown) => trimmed(decodeBody(createShape, body));
export const decodeUpdateProject = (body: unknown) => trimmed(decodeBody(updateShape, body ?? {}));
export type CreateProjectInput = ReturnType<typeof decodeCreateProject>;
export type UpdateProjectInput = ReturnType<typeof decodeUpdateProject>;
