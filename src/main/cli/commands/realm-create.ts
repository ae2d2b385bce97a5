// identity-cli realm create NAME [--display-name TEXT]
import { OPERATOR_ACTOR } from '../../../audit/audit.types.ts';
import { RealmExistsError } from '../../../realms/index.ts';
import { createRealm, InvalidRealmNameError } from '../../../setup/realm.service.ts';
import { requireKeyring } from '../../context.ts';
import { CONFIG_FLAG, parseFlags, withCliContext } from '../cli-context.ts';
import { CliError } from '../cli-error.ts';

export async function realmCreate(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, { ...CONFIG_FLAG, 'display-name': { type: 'string' } });
  const [name, ...extra] = rest;
  if (!name || extra.length > 0)
    throw new CliError('usage: identity-cli realm create NAME [--display-name TEXT] [--config FILE]');
  return withCliContext(flags, async (ctx) => {
    try {
      const realm = await createRealm(
        { db: ctx.db, keyring: requireKeyring(ctx), signingAlgorithm: ctx.config.keys.signingAlgorithm },
        { name, ...(flags['display-name'] ? { displayName: String(flags['display-name']) } : {}) },
        OPERATOR_ACTOR,
        ctx.clock.now(),
      );
      return {
        id: realm.id,
        name: realm.name,
        display_name: realm.display_name,
        issuer: `${ctx.config.server.publicOrigin}/realms/${realm.name}`,
      };
    } catch (e) {
      if (e instanceof RealmExistsError || e instanceof InvalidRealmNameError) throw new CliError(e.message);
      throw e;
    }
  });
}
