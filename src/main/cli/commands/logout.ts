// identity-cli logout: revokes the stored sign-in at the server (RFC 7009, as the public
// identity-cli client) and deletes it from the credentials file (docs/cli.md). The local entry
// goes even when the server cannot revoke, so logging out never leaves a token on disk.
import { parseFlags } from '../../../platform/cli/flags.ts';
import { type Revocation, revokeToken } from '../api-client.ts';
import { CliError } from '../cli-error.ts';
import { cliIo } from '../cli-io.ts';
import { serverFlag } from '../configured-server.ts';
import {
  credentialsPath,
  readStore,
  type StoredCredential,
  selectCredential,
  withStoreLock,
  writeStore,
} from '../credentials-store.ts';

const USAGE = 'usage: identity-cli logout [--realm NAME] [--server URL] [--credentials FILE] [--config FILE]';

type Outcome = Revocation | 'failed' | 'not_needed';

/**
 * The refresh token first: revoking it ends the whole family. The access token is revoked too
 * while it is still valid, so it stops working before it expires.
 */
async function revokeAll(c: StoredCredential, now: Date): Promise<Outcome> {
  try {
    let outcome: Outcome = 'not_needed';
    if (c.refreshToken) outcome = await revokeToken(c, c.refreshToken, 'refresh_token');
    if (outcome !== 'unsupported' && c.expiresAt > now) {
      outcome = await revokeToken(c, c.accessToken, 'access_token');
    }
    return outcome;
  } catch (e) {
    cliIo().stderr.write(`identity-cli: warning: ${(e as Error).message}\n`);
    return 'failed';
  }
}

export async function logout(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, {
    config: { type: 'string' },
    realm: { type: 'string' },
    server: { type: 'string' },
    credentials: { type: 'string' },
  });
  if (rest.length > 0) throw new CliError(USAGE);
  const file = credentialsPath(flags.credentials as string | undefined, cliIo().env);
  return withStoreLock(file, async () => {
    const store = readStore(file);
    const c = selectCredential(store, {
      realm: flags.realm as string | undefined,
      server: serverFlag(flags),
    });
    const outcome = await revokeAll(c, new Date());
    store.delete(c.issuer);
    writeStore(file, store);
    if (outcome === 'unsupported') {
      cliIo().stderr.write(
        'identity-cli: warning: the server has no revocation endpoint; the tokens stay valid until they expire\n',
      );
    }
    if (outcome === 'failed') {
      cliIo().stderr.write('identity-cli: warning: the tokens stay valid at the server until they expire\n');
    }
    cliIo().stderr.write(`Logged out of realm ${c.realm} (${c.issuer}).\n`);
    return { realm: c.realm, issuer: c.issuer, revoked: outcome === 'revoked', credentials: file };
  });
}
