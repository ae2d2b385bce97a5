// What the user use cases need beyond a transaction: the password hasher (Argon2id off the event loop).
import type { Db } from '../platform/db/db.ts';
import type { PasswordHasher } from './password-hasher.ts';

export interface UsersDeps {
  db: Db;
  hasher: PasswordHasher;
}
