// identity-cli login --realm NAME: headless sign-in of an operator with the realm's built-in
// identity-cli client (PKCE, loopback redirect). It answers whatever the transaction asks for:
// password, TOTP enrollment (otpauth URI and a terminal QR code; recovery codes shown once),
// TOTP or recovery code, a password update, consent.
import { randomBytes } from 'node:crypto';
import { CLI_CLIENT_ID } from '../../clients/builtin-clients.ts';
import { loadRuntimeConfig } from '../../main/runtime-config.ts';
import { renderTerminalQr } from '../../mfa/terminal-qr.ts';
import { s256Challenge } from '../../oauth/pkce.ts';
import { parseFlags } from '../../platform/cli/flags.ts';
import { CliError } from '../cli-error.ts';
import { createPrompter, type Prompter } from '../prompt.ts';

const USAGE = 'usage: identity-cli login --realm NAME [--email EMAIL] [--server URL]';
const REDIRECT_URI = 'http://127.0.0.1/callback';

interface Action {
  type: string;
  options?: { scopes?: string[] };
}

// biome-ignore lint/suspicious/noExplicitAny: the state object is read member by member below
type State = Record<string, any>;

const say = (line = '') => process.stderr.write(`${line}\n`);

class TransactionClient {
  private readonly base: string;
  private readonly token: string;
  constructor(base: string, token: string) {
    this.base = base;
    this.token = token;
  }

  async step(path: string, body: unknown): Promise<{ status: number; body: State }> {
    const res = await fetch(`${this.base}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-transaction-token': this.token },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as State };
  }
}

async function answer(action: Action, tx: TransactionClient, p: Prompter, email: string | undefined) {
  switch (action.type) {
    case 'identify':
    case 'password': {
      const identifier =
        action.type === 'identify' ? (email ?? (await p.ask('Email or username'))) : undefined;
      const password = await p.secret('Password');
      return tx.step('password', identifier ? { identifier, password } : { password });
    }
    case 'enroll_totp': {
      const enrolled = await tx.step('totp/enroll', {});
      if (enrolled.status !== 200) return enrolled;
      const totp = enrolled.body.one_time?.totp as { secret: string; otpauth_uri: string };
      say('Your account needs an authenticator app. Scan this code, or enter the key by hand:');
      say(renderTerminalQr(totp.otpauth_uri));
      say(`  ${totp.otpauth_uri}`);
      say(`  key: ${totp.secret}`);
      const code = await p.ask('Code from the authenticator app');
      const activated = await tx.step('totp/activate', { code });
      const codes = activated.body.one_time?.recovery_codes as string[] | undefined;
      if (codes) {
        say('Recovery codes (each works once; store them now, they are not shown again):');
        for (const c of codes) say(`  ${c}`);
      }
      return activated;
    }
    case 'totp':
      return tx.step('totp', { code: await p.ask('Code from the authenticator app') });
    case 'recovery_code':
      return tx.step('recovery-code', { code: await p.ask('Recovery code') });
    case 'update_password':
      return tx.step('password/update', { new_password: await p.secret('New password', { confirm: true }) });
    case 'consent': {
      const scopes = action.options?.scopes ?? [];
      const yes = /^y(es)?$/i.test(
        await p.ask(`Allow identity-cli the scopes ${scopes.join(' ')}? (yes/no)`),
      );
      return tx.step('consent', { approve: yes });
    }
    default:
      throw new CliError(`the sign-in asks for ${action.type}, which identity-cli cannot answer`);
  }
}

/** Prefers the action a person can answer here: a TOTP code over a recovery code. */
function pick(actions: Action[]): Action | undefined {
  return actions.find((a) => a.type !== 'recovery_code') ?? actions[0];
}

export async function login(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, {
    config: { type: 'string' },
    realm: { type: 'string' },
    email: { type: 'string' },
    server: { type: 'string' },
  });
  const realm = flags.realm as string | undefined;
  if (!realm || rest.length > 0) throw new CliError(USAGE);
  const server =
    (flags.server as string | undefined) ??
    loadRuntimeConfig(flags.config as string | undefined).server.publicOrigin;
  const verifier = randomBytes(32).toString('base64url');
  const startUrl = `${server.replace(/\/$/, '')}/api/v1/realms/${encodeURIComponent(realm)}/auth/transactions`;
  let res: Response;
  try {
    res = await fetch(startUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: CLI_CLIENT_ID,
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        resource: [`${server.replace(/\/$/, '')}/api/v1/realms/${realm}`],
        code_challenge: s256Challenge(verifier),
        code_challenge_method: 'S256',
        state: randomBytes(12).toString('base64url'),
      }),
    });
  } catch (e) {
    throw new CliError(`cannot reach ${server}: ${(e as Error).message}`);
  }
  const started = (await res.json()) as State;
  if (res.status !== 201)
    throw new CliError(`the server refused the sign-in: ${started.detail ?? res.status}`);
  const tx = new TransactionClient(`${startUrl}/${started.transaction_id}`, started.continuation_token);
  const p = createPrompter();
  try {
    let state: State = started.state;
    while (state.status === 'pending') {
      if (state.error) throw new CliError(`the sign-in cannot go on: ${state.error}`);
      const action = pick(state.next_actions as Action[]);
      if (!action) throw new CliError('the sign-in offers no next step');
      const r = await answer(action, tx, p, flags.email as string | undefined);
      if (r.status !== 200)
        throw new CliError(`the server refused the ${action.type} step: ${r.body.detail ?? r.status}`);
      if (
        r.body.status === 'pending' &&
        (r.body.next_actions as Action[]).some((a) => a.type === action.type)
      ) {
        say('That did not work; try again.');
      }
      state = r.body;
    }
    if (state.status !== 'completed')
      throw new CliError(`the sign-in ended ${state.status}: ${state.error ?? ''}`);
    say(`Signed in to realm ${realm}.`);
    // Exchanging the code for tokens needs the token endpoint, which is not part of this release.
    return {
      status: state.status,
      transaction_id: state.id,
      completed_factors: state.completed_factors,
      user: state.user,
      redirect_to: state.redirect_to,
    };
  } finally {
    p.close();
  }
}
