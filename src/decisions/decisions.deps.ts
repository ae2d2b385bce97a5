// What the decision API needs from the running process.
import type { AccessTokenVerifier } from '../access/verify-access-token.ts';
import type { Clock } from '../platform/clock.ts';
import type { Config } from '../platform/config/settings.ts';
import type { Db } from '../platform/db/db.ts';
import type { Logger } from '../platform/log.ts';

export interface DecisionApiDeps {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  tokenVerifier: AccessTokenVerifier;
}
