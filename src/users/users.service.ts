// Creating and reading accounts: the administration API (users.routes.ts), the bootstrap and the
// test harness. Identifiers are unique per realm and type (email and username ignoring ASCII case).
// Reads follow doc 2, Identity read evidence.

import type { Actor } from '../audit/audit.types.ts';
import { inChange, recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Db, Queryable, Tx } from '../platform/db/db.ts';
import { isUniqueViolation } from '../platform/db/pg-errors.ts';
import { problem } from '../platform/http/problem.ts';
import { currentPolicy, policyValue } from '../realms/index.ts';
import { type IdentifierType, isValidIdentifier } from './identifiers.ts';
import type { PasswordHasher, PasswordVerifier } from './password-hasher.ts';
import type { ListQuery } from './users.decode.ts';
import type { UsersDeps } from './users.deps.ts';
import {
  findUser,
  findUserByIdentifier,
  type IdentifierRow,
  insertIdentifier,
  insertUser,
  listIdentifiers,
  listUsers,
  setPassword,
  type UserRow,
} from './users.repo.ts';
import type { CreateUserInput } from './users.schema.ts';

export interface NewUser {
  email?: string;
  username?: string;
  /** E.164 */
  phone?: string;
  displayName?: string;
  password?: string;
  requiredActions?: string[];
  emailVerified?: boolean;
  createdVia: string;
}

const IDENTIFIER_TYPES = ['email', 'phone', 'username'] as const satisfies readonly IdentifierType[];

export async function createUser(
  deps: { db: Db; hasher: PasswordHasher },
  realmId: string,
  input: NewUser,
  actor: Actor,
  now: Date,
): Promise<UserRow> {
  for (const type of IDENTIFIER_TYPES) {
    const value = input[type];
    if (value !== undefined && !isValidIdentifier(type, value)) {
      throw problem.validation([{ field: type, code: 'invalid' }]);
    }
  }
  // Argon2 runs before the transaction so no row lock waits on it.
  const verifier = input.password === undefined ? null : await deps.hasher.hash(input.password);
  const call: Call = { realmId, actor, correlationId: null, now };
  return deps.db.tx((tx) => createUserInTx(tx, call, input, verifier));
}

/** The transactional part of createUser, for use cases that do more in the same commit. */
export async function createUserInTx(
  tx: Tx,
  call: Call,
  input: NewUser,
  verifier: PasswordVerifier | null,
): Promise<UserRow> {
  const { realmId, now } = call;
  for (const type of IDENTIFIER_TYPES) {
    const value = input[type];
    if (value !== undefined && (await findUserByIdentifier(tx, realmId, type, value))) {
      throw problem.conflict(`the ${type} is already used by another account`);
    }
  }
  const user = await insertUser(
    tx,
    {
      realmId,
      displayName: input.displayName ?? null,
      requiredActions: input.requiredActions ?? [],
      createdVia: input.createdVia,
    },
    now,
  );
  // The first identifier given, in this order, is the primary one.
  const primary = IDENTIFIER_TYPES.find((type) => input[type] !== undefined);
  for (const type of IDENTIFIER_TYPES) {
    const value = input[type];
    if (value === undefined) continue;
    // A username is chosen, not delivered to, so there is nothing to verify.
    const verified = type === 'email' ? (input.emailVerified ?? false) : type === 'username';
    try {
      await insertIdentifier(
        tx,
        { realmId, userId: user.id, type, value, verified, primary: type === primary },
        now,
      );
    } catch (e) {
      // Another account took the value between the check above and this insert.
      if (isUniqueViolation(e)) throw problem.conflict(`the ${type} is already used by another account`);
      throw e;
    }
  }
  if (verifier) await setPassword(tx, realmId, user.id, verifier, now);
  const record = recorder(tx, call);
  await record.audit('user.created', {
    category: 'identity',
    subject: userSubject(user.id),
    data: { created_via: input.createdVia, required_actions: user.required_actions },
  });
  await record.event('user.created', { user_id: user.id, created_via: input.createdVia });
  return user;
}

// ---- administration API: create and read ----------------------------------------------------

/** A request's Call: the administration API always has a correlation id. */
export interface AdminCall extends Call {
  correlationId: string;
}

export interface UserView {
  user: UserRow;
  identifiers: IdentifierRow[];
}

export const userSubject = (id: string) => ({ type: 'user', id });

export async function viewOf(q: Queryable, realmId: string, users: UserRow[]): Promise<UserView[]> {
  const identifiers =
    users.length === 0
      ? []
      : await listIdentifiers(
          q,
          realmId,
          users.map((u) => u.id),
        );
  return users.map((user) => ({ user, identifiers: identifiers.filter((i) => i.user_id === user.id) }));
}

type Deps = UsersDeps;

export async function createAccount(deps: Deps, call: AdminCall, input: CreateUserInput): Promise<UserView> {
  const verifier = input.password === undefined ? null : await deps.hasher.hash(input.password);
  return deps.db.tx(async (tx) => {
    const { password: _secret, ...rest } = input;
    const user = await createUserInTx(tx, call, { ...rest, createdVia: 'admin' }, verifier);
    const [view] = await viewOf(tx, call.realmId, [user]);
    return view as UserView;
  });
}

/** doc 2, Identity read evidence: with data_access.log_identity_reads the read is audited first. */
async function logsReads(q: Queryable, realmId: string): Promise<boolean> {
  return policyValue(await currentPolicy(q, realmId), 'data_access', 'log_identity_reads') === true;
}

export async function readAccount(db: Db, call: AdminCall, userId: string): Promise<UserView> {
  return inChange(db, call, async (tx, record) => {
    const user = await findUser(tx, call.realmId, userId);
    if (!user) throw problem.notFound('no such user');
    if (await logsReads(tx, call.realmId))
      await record.audit('user.read', { category: 'data_access', subject: userSubject(userId) });
    const [view] = await viewOf(tx, call.realmId, [user]);
    return view as UserView;
  });
}

export interface AccountPage {
  items: UserView[];
  /** Id of the last item when another page may follow. */
  nextAfter: string | null;
}

export async function listAccounts(db: Db, call: AdminCall, query: ListQuery): Promise<AccountPage> {
  return inChange(db, call, async (tx, record) => {
    // One row more than asked tells whether another page exists.
    const rows = await listUsers(tx, call.realmId, { ...query, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    if (await logsReads(tx, call.realmId)) {
      await record.audit('user.search', {
        category: 'data_access',
        data: { result_count: page.length, filtered: query.identifier !== null },
      });
    }
    const last = page.at(-1);
    return {
      items: await viewOf(tx, call.realmId, page),
      nextAfter: rows.length > query.limit && last ? last.id : null,
    };
  });
}
