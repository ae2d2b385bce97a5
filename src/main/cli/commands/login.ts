// identity-cli login --realm NAME: headless sign-in of an operator with the realm's built-in
// identity-cli client (PKCE, loopback redirect). It answers whatever the transaction asks for:
// password, TOTP enrollment (otpauth URI and a terminal QR code; recovery codes shown once),
// TOTP or recovery code (one prompt takes either), a password update, consent. The code is then
// exchanged for an admin-audience token, stored with its refresh token in the credentials file
// (docs/cli.md).
import { randomBytes } from 'node:crypto';
import { CLI_CLIENT_ID } from '../../../clients/builtin-clients.ts';
import { s256Challenge } from '../../../kernel/pkce.ts';
import { QR_STYLES, type QrStyle, renderTerminalQr } from '../../../mfa/terminal-qr.ts';
import { parseFlags } from '../../../platform/cli/flags.ts';
import { apiBaseOf, discoverRealm, exchangeCode, type TokenSet } from '../api-client.ts';
import { CliError } from '../cli-error.ts';
import { cliIo, configFlag } from '../cli-io.ts';
import { configuredServer } from '../configured-server.ts';
import {
  credentialsPath,
  readStore,
  type StoredCredential,
  withStoreLock,
  writeStore,
} from '../credentials-store.ts';
import { createPrompter, type Prompter } from '../prompt.ts';
import { deviceSignIn } from './login-device.ts';

const USAGE =
  'usage: identity-cli login --realm NAME [--device] [--email EMAIL] [--server URL] [--credentials FILE] [--qr dark|light|ansi] [--config FILE]';
const REDIRECT_URI = 'http://127.0.0.1/callback';

interface Action {
  type: string;
  options?: { scopes?: string[] };
}

// biome-ignore lint/suspicious/noExplicitAny: the state object is read member by member below
type State = Record<string, any>;

const say = (line = '') => cliIo().stderr.write(`${line}\n`);

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

interface Answering {
  prompter: Prompter;
  email: string | undefined;
  qr: QrStyle;
}

interface Answered {
  /** The step that was sent: totp or recovery_code when one prompt offered both. */
  type: string;
  res: { status: number; body: State };
}

// An authenticator code is digits only; a recovery code has letters and a dash (xxxxx-xxxxx).
const isAuthenticatorCode = (s: string) => /^\d{6,8}$/.test(s.replace(/\s+/g, ''));

/** One prompt for a TOTP code, which also takes a recovery code when the transaction offers one. */
async function totpOrRecovery(
  tx: TransactionClient,
  p: Prompter,
  recoveryOffered: boolean,
): Promise<Answered> {
  if (!recoveryOffered) {
    const code = await p.ask('Code from the authenticator app');
    return { type: 'totp', res: await tx.step('totp', { code }) };
  }
  const code = (await p.ask('Code from the authenticator app (or a recovery code)')).trim();
  if (isAuthenticatorCode(code))
    return { type: 'totp', res: await tx.step('totp', { code: code.replace(/\s+/g, '') }) };
  return { type: 'recovery_code', res: await tx.step('recovery-code', { code }) };
}

async function answer(
  action: Action,
  offered: Action[],
  tx: TransactionClient,
  a: Answering,
): Promise<Answered> {
  if (action.type === 'totp')
    return totpOrRecovery(
      tx,
      a.prompter,
      offered.some((o) => o.type === 'recovery_code'),
    );
  return { type: action.type, res: await answerOne(action, tx, a) };
}

async function answerOne(action: Action, tx: TransactionClient, a: Answering) {
  const { prompter: p, email } = a;
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
      say(renderTerminalQr(totp.otpauth_uri, { style: a.qr }));
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

/** Prefers a TOTP code over a recovery code: its prompt takes a recovery code too. */
function pick(actions: Action[]): Action | undefined {
  return actions.find((a) => a.type !== 'recovery_code') ?? actions[0];
}

/** The code from the completed transaction's redirect, after checking state and issuer (RFC 9207). */
function codeFrom(redirectTo: string, state: string, issuer: string): string {
  const params = new URL(redirectTo).searchParams;
  if (params.get('state') !== state) throw new CliError('the sign-in answered with another state');
  const iss = params.get('iss');
  if (iss !== null && iss !== issuer) throw new CliError(`the sign-in answered for issuer ${iss}`);
  const error = params.get('error');
  if (error) throw new CliError(`the sign-in ended with ${error}: ${params.get('error_description') ?? ''}`);
  const code = params.get('code');
  if (!code) throw new CliError('the sign-in completed without an authorization code');
  return code;
}

async function runTransaction(
  tx: TransactionClient,
  first: State,
  opts: { email: string | undefined; qr: QrStyle },
): Promise<State> {
  const p = createPrompter();
  try {
    let state = first;
    while (state.status === 'pending') {
      if (state.error) throw new CliError(`the sign-in cannot go on: ${state.error}`);
      const offered = state.next_actions as Action[];
      const action = pick(offered);
      if (!action) throw new CliError('the sign-in offers no next step');
      const { type, res: r } = await answer(action, offered, tx, { prompter: p, ...opts });
      if (r.status !== 200)
        throw new CliError(`the server refused the ${type} step: ${r.body.detail ?? r.status}`);
      if (r.body.status === 'pending' && (r.body.next_actions as Action[]).some((a) => a.type === type)) {
        say('That did not work; try again.');
      }
      state = r.body;
    }
    if (state.status !== 'completed')
      throw new CliError(`the sign-in ended ${state.status}: ${state.error ?? ''}`);
    return state;
  } finally {
    p.close();
  }
}

/**
 * A sign-in with a recovery code completes, but gets no administration token (spec doc 1, Errors,
 * case rule 1) and leaves the account recovery-restricted: say so, and what restores it.
 */
function recoveryRefusal(e: unknown): CliError {
  return new CliError(
    'signed in with a recovery code, which gets no administration token: the account is now ' +
      'recovery-restricted until it signs in with its authenticator app again or another administrator ' +
      `restores it (${(e as Error).message})`,
  );
}

/** --qr as given; else explicit colours on a terminal that shows them, the dark style otherwise. */
function qrStyle(flag: string | undefined): QrStyle {
  if (flag === undefined) return cliIo().stderr.isTTY && !cliIo().env.NO_COLOR ? 'ansi' : 'dark';
  if (!(QR_STYLES as readonly string[]).includes(flag))
    throw new CliError(`--qr must be one of ${QR_STYLES.join(', ')}, not ${flag}`);
  return flag as QrStyle;
}

export async function login(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, {
    config: { type: 'string' },
    realm: { type: 'string' },
    email: { type: 'string' },
    server: { type: 'string' },
    credentials: { type: 'string' },
    qr: { type: 'string' },
    device: { type: 'bool' },
  });
  const realm = flags.realm as string | undefined;
  if (!realm || rest.length > 0) throw new CliError(USAGE);
  const qr = qrStyle(flags.qr as string | undefined);
  const file = credentialsPath(flags.credentials as string | undefined, cliIo().env);
  const server = ((flags.server as string | undefined) ?? configuredServer(configFlag(flags))).replace(
    /\/+$/,
    '',
  );
  // The resource must be the audience the server derives from its public origin, which can
  // differ from the URL this command reaches it at; the realm's issuer says which it is.
  const { issuer, audience } = await discoverRealm(server, realm);
  if (flags.device === true) {
    // The person signs in on another device (login-device.ts); the store is written the same way.
    const tokens = await deviceSignIn(server, realm, audience);
    return store(file, { issuer, realm, server, audience }, tokens, { name: null, email: null });
  }
  const verifier = randomBytes(32).toString('base64url');
  const clientState = randomBytes(12).toString('base64url');
  const startUrl = `${apiBaseOf(server, realm)}/auth/transactions`;
  let res: Response;
  try {
    res = await fetch(startUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: CLI_CLIENT_ID,
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        resource: [audience],
        code_challenge: s256Challenge(verifier),
        code_challenge_method: 'S256',
        state: clientState,
      }),
    });
  } catch (e) {
    throw new CliError(`cannot reach ${server}: ${(e as Error).message}`);
  }
  const started = (await res.json()) as State;
  if (res.status !== 201)
    throw new CliError(`the server refused the sign-in: ${started.detail ?? res.status}`);
  const tx = new TransactionClient(`${startUrl}/${started.transaction_id}`, started.continuation_token);
  const email = flags.email as string | undefined;
  const state = await runTransaction(tx, started.state, { email, qr });

  const code = codeFrom(String(state.redirect_to), clientState, issuer);
  const tokens = await exchangeCode(
    { server, realm, code, redirectUri: REDIRECT_URI, verifier, audience },
    new Date(),
  ).catch((e: unknown) => {
    throw (state.completed_factors as string[] | undefined)?.includes('recovery') ? recoveryRefusal(e) : e;
  });
  const result = await store(file, { issuer, realm, server, audience }, tokens, {
    name: state.user?.display_name ?? null,
    email: email ?? state.user?.email_hint ?? null,
  });
  return { ...result, completed_factors: state.completed_factors };
}

/** Stores the tokens in the credentials file and says who is logged in; never prints a token. */
async function store(
  file: string,
  at: { issuer: string; realm: string; server: string; audience: string },
  tokens: TokenSet,
  shown: { name: string | null; email: string | null },
) {
  const { issuer, realm, server, audience } = at;
  const now = new Date();
  const credential: StoredCredential = {
    issuer,
    realm,
    server,
    audience,
    apiBase: apiBaseOf(server, realm),
    user: { id: tokens.subject, ...shown },
    accessToken: tokens.accessToken,
    expiresAt: tokens.expiresAt,
    refreshToken: tokens.refreshToken,
    updatedAt: now,
  };
  await withStoreLock(file, async () => {
    const store = readStore(file);
    store.set(issuer, credential);
    writeStore(file, store);
  });
  const { name: userName, email: userEmail, id: userId } = credential.user;
  const who =
    [userName, userEmail && (userName ? `(${userEmail})` : userEmail)].filter(Boolean).join(' ') || userId;
  say(`Logged in to realm ${realm} as ${who}.`);
  say(
    `The access token expires at ${tokens.expiresAt.toISOString()}${tokens.refreshToken ? '; identity-cli refreshes it as needed' : ''}.`,
  );
  say(`Credentials stored in ${file}.`);
  // Never the tokens themselves: stdout often ends up in logs.
  return {
    realm,
    issuer,
    user: credential.user,
    expires_at: tokens.expiresAt.toISOString(),
    refreshable: tokens.refreshToken !== null,
    credentials: file,
  };
}
