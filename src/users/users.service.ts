// Creating accounts. The administration API builds on this; today the bootstrap and the test
// harness use it.
import { recordAudit } from '../audit/audit.repo.ts';
import type { Actor } from '../audit/audit.types.ts';
import { addEvent } from '../events/outbox.repo.ts';
import type { Db } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { isValidIdentifier } from './identifiers.ts';
import type { PasswordHasher } from './password-hasher.ts';
import { insertIdentifier, insertUser, setPassword, type UserRow } from './users.repo.ts';

export interface NewUser {
  email?: string;
  username?: string;
  displayName?: string;
  password?: string;
  requiredActions?: string[];
  emailVerified?: boolean;
  createdVia: string;
}

export async function createUser(
  deps: { db: Db; hasher: PasswordHasher },
  realmId: string,
  input: NewUser,
  actor: Actor,
  now: Date,
): Promise<UserRow> {
  if (input.email !== undefined && !isValidIdentifier('email', input.email)) {
    throw problem.validation([{ field: 'email', code: 'invalid' }]);
  }
  if (input.username !== undefined && !isValidIdentifier('username', input.username)) {
    throw problem.validation([{ field: 'username', code: 'invalid' }]);
  }
  const verifier = input.password === undefined ? null : await deps.hasher.hash(input.password);
  return deps.db.tx(async (tx) => {
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
    if (input.email !== undefined) {
      await insertIdentifier(
        tx,
        {
          realmId,
          userId: user.id,
          type: 'email',
          value: input.email,
          verified: input.emailVerified ?? false,
          primary: true,
        },
        now,
      );
    }
    if (input.username !== undefined) {
      await insertIdentifier(
        tx,
        {
          realmId,
          userId: user.id,
          type: 'username',
          value: input.username,
          verified: true,
          primary: input.email === undefined,
        },
        now,
      );
    }
    if (verifier) await setPassword(tx, realmId, user.id, verifier, now);
    await recordAudit(
      tx,
      {
        realmId,
        type: 'user.created',
        category: 'identity',
        actor,
        subject: { type: 'user', id: user.id },
        data: { created_via: input.createdVia },
      },
      now,
    );
    await addEvent(tx, {
      realmId,
      type: 'user.created',
      occurredAt: now,
      data: { user_id: user.id, created_via: input.createdVia },
    });
    return user;
  });
}
