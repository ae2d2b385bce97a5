// identity-cli realm set-login-ui NAME URL: where the realm's authorization endpoint sends browsers
// (realm policy interaction.login_ui_url), until the settings API arrives.
import { OPERATOR_ACTOR } from '../../../audit/audit.types.ts';
import { systemCall } from '../../../kernel/call.ts';
import { changePolicy, findRealmByName, policyRulesOf } from '../../../realms/index.ts';
import { CONFIG_FLAG, parseFlags, withCliContext } from '../cli-context.ts';
import { CliError } from '../cli-error.ts';

const USAGE = 'usage: identity-cli realm set-login-ui NAME URL';

function checkUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`not an absolute URL: ${raw}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new CliError('the login UI URL must be http or https');
  if (url.hash) throw new CliError('the login UI URL must not have a fragment');
  return raw;
}

export async function realmSetLoginUi(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, CONFIG_FLAG);
  const [name, raw, ...extra] = rest;
  if (!name || !raw || extra.length > 0) throw new CliError(USAGE);
  const url = checkUrl(raw);
  return withCliContext(flags, async (ctx) => {
    const realm = await findRealmByName(ctx.db, name);
    if (!realm) throw new CliError(`no realm named ${name}`);
    if (ctx.config.environment === 'production' && !url.startsWith('https:')) {
      throw new CliError('in production the login UI must be served over https');
    }
    const { revision } = await changePolicy(
      ctx.db,
      systemCall(realm.id, ctx.clock.now(), OPERATOR_ACTOR),
      { patch: { interaction: { login_ui_url: url } }, reason: 'login UI set with identity-cli' },
      policyRulesOf(ctx.config),
    );
    return { realm: realm.name, policy_revision: revision, login_ui_url: url };
  });
}
