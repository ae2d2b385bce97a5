// Schemas of the users administration API under /api/v1/realms/{realm}/users (spec doc 1, "Account
// states" and "Recovery and account administration"; doc 2, Limits): the request bodies, path
// parameters and the user representation (docs/openapi.md). Identifier syntax and the password
// length stay in identifiers.ts and password-rules.ts; the schemas call them.
import Type, { type Static } from 'typebox';
import { problem } from '../platform/http/problem.ts';
import {
  bytesString,
  type CamelKeys,
  idParam,
  NoContent,
  problems,
  type RouteSchema,
  withRule,
} from '../platform/http/route-schema.ts';
import { ACCOUNT_STATES } from './account.states.ts';
import { isValidIdentifier } from './identifiers.ts';
import { MIN_PASSWORD_LENGTH } from './password-rules.ts';
import { ADMIN_REQUIRED_ACTIONS, USER_ID } from './users.decode.ts';

const MAX_PASSWORD_BYTES = 1024;

const password = () => bytesString(MAX_PASSWORD_BYTES, { minLength: MIN_PASSWORD_LENGTH });
const identifier = (type: 'email' | 'username' | 'phone') =>
  withRule(bytesString(254), (v) => (isValidIdentifier(type, v) ? null : `not a valid ${type}`), 'invalid');
const displayName = () => Type.String({ minLength: 1, maxLength: 200 });
const reason = () => Type.String({ minLength: 1, maxLength: 500 });
const closed = { additionalProperties: false } as const;

export const UserParams = Type.Object({ user: idParam(USER_ID, 'no such user') });

export const CreateUserBody = Type.Object(
  {
    email: Type.Optional(identifier('email')),
    username: Type.Optional(identifier('username')),
    phone: Type.Optional(identifier('phone')),
    display_name: Type.Optional(displayName()),
    password: Type.Optional(password()),
    email_verified: Type.Optional(Type.Boolean()),
    required_actions: Type.Optional(
      Type.Array(Type.Enum([...ADMIN_REQUIRED_ACTIONS]), { maxItems: 4, uniqueItems: true }),
    ),
  },
  { ...closed, description: 'At least one of email, username or phone.' },
);

/** PATCH /users/{user}: the profile members an administrator may change; null clears one. */
export const UpdateProfileBody = Type.Object(
  { display_name: Type.Optional(Type.Union([displayName(), Type.Null()])) },
  closed,
);

export const SetPasswordBody = Type.Object(
  { password: password(), temporary: Type.Optional(Type.Boolean()) },
  closed,
);

export const ReasonBody = Type.Object({ reason: reason() }, closed);
export const OptionalReasonBody = Type.Object({ reason: Type.Optional(reason()) }, closed);

// ---- answers ------------------------------------------------------------------------------------

const instant = () => Type.String({ format: 'date-time' });

export const IdentifierView = Type.Object(
  {
    id: Type.String(),
    type: Type.Enum(['email', 'username', 'phone']),
    value: Type.String(),
    verified: Type.Boolean(),
    primary: Type.Boolean(),
  },
  closed,
);

export const UserView = Type.Object(
  {
    id: Type.String({ pattern: USER_ID.source }),
    state: Type.Enum([...ACCOUNT_STATES]),
    display_name: Type.Union([Type.String(), Type.Null()]),
    identifiers: Type.Array(IdentifierView),
    required_actions: Type.Array(Type.String()),
    created_via: Type.String(),
    created_at: instant(),
    updated_at: instant(),
    last_login_at: Type.Union([instant(), Type.Null()]),
    scheduled_deactivation: Type.Union([
      Type.Object({ at: instant(), reason: Type.Union([Type.String(), Type.Null()]) }, closed),
      Type.Null(),
    ]),
  },
  { ...closed, title: 'User' },
);

export const UserPage = Type.Object(
  { items: Type.Array(UserView), next_cursor: Type.Union([Type.String(), Type.Null()]) },
  closed,
);

export const UserListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1 })),
    cursor: Type.Optional(Type.String()),
    identifier: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
  },
  closed,
);

export const SessionsRevoked = Type.Object(
  { sessions_revoked: Type.Integer({ minimum: 0 }), grants_revoked: Type.Integer({ minimum: 0 }) },
  closed,
);

// ---- the routes' schemas -------------------------------------------------------------------------

const tags = ['users'];
export const USER_ROUTES = {
  create: {
    summary: 'Create a user',
    tags,
    body: CreateUserBody,
    response: { 201: UserView, ...problems(409) },
  },
  list: {
    summary: 'List users',
    tags,
    querystring: UserListQuery,
    response: { 200: UserPage },
  },
  read: { summary: 'Read a user', tags, params: UserParams, response: { 200: UserView } },
  update: {
    summary: "Change a user's profile",
    tags,
    params: UserParams,
    body: UpdateProfileBody,
    response: { 200: UserView },
  },
  delete: {
    summary: 'Delete a user',
    tags,
    params: UserParams,
    response: { 204: NoContent, ...problems(409) },
  },
  setPassword: {
    summary: "Set a user's password",
    tags,
    params: UserParams,
    body: SetPasswordBody,
    response: { 204: NoContent },
  },
  passwordCompromised: {
    summary: "Mark a user's password compromised",
    tags,
    params: UserParams,
    body: OptionalReasonBody,
    bodyOptional: true,
    response: { 204: NoContent },
  },
  stateChange: {
    summary: "Change a user's account state",
    tags,
    params: UserParams,
    body: ReasonBody,
    response: { 200: UserView, ...problems(409) },
  },
  revokeSessions: {
    summary: "End a user's sessions and grants",
    tags,
    params: UserParams,
    body: OptionalReasonBody,
    bodyOptional: true,
    response: { 200: SessionsRevoked },
  },
} satisfies Record<string, RouteSchema>;

// ---- rules across members ------------------------------------------------------------------------

/** An account needs an identifier; email_verified needs an email (422). */
export function checkNewUser<
  T extends { email?: string; username?: string; phone?: string; emailVerified?: boolean },
>(input: T): T {
  if (input.email === undefined && input.username === undefined && input.phone === undefined) {
    throw problem.validation(
      [{ field: 'email', code: 'required', detail: 'give at least one of email, username or phone' }],
      'an account needs at least one identifier',
    );
  }
  if (input.emailVerified === true && input.email === undefined) {
    throw problem.validation([{ field: 'email_verified', code: 'not_allowed', detail: 'no email given' }]);
  }
  return input;
}

/** A PATCH body naming nothing to change is 422, so a misspelt client sees it. */
export function profileChange(input: { displayName?: string | null }): { displayName: string | null } {
  if (input.displayName === undefined) {
    throw problem.validation([{ field: 'display_name', code: 'required', detail: 'nothing to change' }]);
  }
  return { displayName: input.displayName };
}

export type CreateUserInput = CamelKeys<Static<typeof CreateUserBody>>;
export type ProfileChange = { displayName: string | null };
