// identity-cli realm set-login-ui NAME URL: where the realm's authorization endpoint sends browsers
// (realm policy interaction.login_ui_url); identity-cli realm set-policy NAME --data JSON: any policy
// members. Both go through the settings API when a server is running (policy-change.ts).
import { parseFlags } from '../../../platform/cli/flags.ts';
import { CONFIG_FLAG } from '../cli-context.ts';
import { CliError } from '../cli-error.ts';
import { changeRealmPolicy, type PolicyCommandFlags } from '../policy-change.ts';
import { requestBody } from './api.ts';

const USAGE =
  'usage: identity-cli realm set-login-ui NAME URL [--server URL] [--credentials FILE] [--config FILE]';
const POLICY_USAGE =
  'usage: identity-cli realm set-policy NAME --data JSON|@FILE|@- [--expected-revision N] [--server URL] [--credentials FILE] [--config FILE]';

const FLAGS = { ...CONFIG_FLAG, server: { type: 'string' }, credentials: { type: 'string' } } as const;

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

const commandFlags = (flags: Record<string, unknown>): PolicyCommandFlags => ({
  config: flags.config as string | undefined,
  server: flags.server as string | undefined,
  credentials: flags.credentials as string | undefined,
});

export async function realmSetLoginUi(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, FLAGS);
  const [name, raw, ...extra] = rest;
  if (!name || !raw || extra.length > 0) throw new CliError(USAGE);
  const url = checkUrl(raw);
  const r = await changeRealmPolicy(
    name,
    { interaction: { login_ui_url: url } },
    'login UI set with identity-cli',
    commandFlags(flags),
  );
  return { realm: r.realm, policy_revision: r.policy_revision, login_ui_url: url };
}

export async function realmSetPolicy(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, {
    ...FLAGS,
    data: { type: 'string' },
    'expected-revision': { type: 'int' },
  });
  const [name, ...extra] = rest;
  const text = requestBody(flags.data as string | undefined);
  if (!name || extra.length > 0 || text === null) throw new CliError(POLICY_USAGE);
  const patch: unknown = JSON.parse(text);
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
    throw new CliError('--data must be a JSON object of policy sections');
  return changeRealmPolicy(
    name,
    patch as Record<string, unknown>,
    'policy set with identity-cli',
    commandFlags(flags),
    flags['expected-revision'] as number | undefined,
  );
}
