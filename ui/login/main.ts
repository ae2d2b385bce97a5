// The login UI's controller (docs/login-ui.md): reads transaction_id and realm from the URL,
// reads the transaction state, shows the screen of the first offered next action (the others as
// alternatives), runs steps, shows errors and notices in plain words, and follows redirect_to.
import { applyColour, type Brand, brandHeader, loadBrand, supportLink } from '../lib/branding.js';
import { field, h } from '../lib/dom.js';
import { describeCode, inTime, type MessageKey, pickLocale, setLocale, t } from '../lib/i18n.js';
import { conditionalAvailable, getPasskey, wasCancelled } from '../lib/passkey.js';
import { ApiProblem, type NextAction, Transaction, type TxState } from '../lib/transaction.js';
import { finishedElsewhere, markFinished, watchOtherTabs } from './other-tabs.js';
import { recoveryCodesView } from './recovery-codes.js';
import { otherProviders } from './screens/federation.js';
import { stepForm } from './screens/form.js';
import { SCREENS } from './screens/index.js';
import { typedIdentifierOf } from './screens/password.js';
import type { Screen, ScreenContext, StepOptions } from './screens/screen.js';

const app = document.getElementById('app') as HTMLElement;
/** The client id of the built-in account page (ui/account/oauth.ts). */
const ACCOUNT_CLIENT = 'account';
const params = new URLSearchParams(location.search);

/** The server's origin: this page's own unless the deployment names another (docs/login-ui.md). */
function apiBase(): string {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="proudauth-server"]');
  const value = meta?.content.trim();
  return value ? value.replace(/\/$/, '') : location.origin;
}

let tx: Transaction;
/** The realm's brand (docs/login-ui.md, "Branding"); null until read, or when it cannot be. */
let brand: Brand | null = null;
let brandTop: HTMLElement | null = null;
let totp: ScreenContext['totp'] = null;
let chosen: string | null = null;

/** Replaces the page content; moves focus to the first field, else the heading. */
function show(title: string, ...content: (HTMLElement | null)[]): void {
  const heading = h('h1', { tabindex: '-1' }, title);
  const parts = [brandTop, heading, ...content, supportLink(brand)];
  app.replaceChildren(...parts.filter((c): c is HTMLElement => c !== null));
  const site = brand?.display_name ?? t('app.title');
  document.title = title === site ? title : `${title} · ${site}`;
  const first = app.querySelector<HTMLElement>(
    'input:not([type=hidden]):not([disabled]):not([readonly]), select, textarea',
  );
  (first ?? heading).focus();
}

const alert = (text: string) => h('p', { class: 'alert', role: 'alert' }, text);
const notice = (text: string) => h('p', { class: 'notice', role: 'status' }, text);

function errorText(e: unknown): string {
  // A spent sign-in budget says how long it stays spent (the answer's Retry-After).
  if (e instanceof ApiProblem && e.code === 'rate_limited' && e.retryAfterSeconds !== null)
    return t('code.rate_limited_wait', { when: inTime(e.retryAfterSeconds) });
  if (e instanceof ApiProblem) return describeCode(e.transactionStatus === 'expired' ? 'expired' : e.code);
  return describeCode('network');
}

function showFatal(text: string): void {
  show(t('app.title'), alert(text), h('p', {}, t('app.try_again')));
}

/** Another tab of this browser (a magic link opened from the mail) finished this sign-in. */
function showFinishedElsewhere(): void {
  conditional?.abort();
  conditional = null;
  show(t('app.title'), notice(t('app.finished_elsewhere')));
}

/** The error of a call, unless another tab finished the sign-in meanwhile (the likelier story). */
function showFailure(e: unknown): void {
  if (tx && finishedElsewhere(tx.id)) showFinishedElsewhere();
  else showFatal(errorText(e));
}

function cancelButton(): HTMLElement {
  const b = h('button', { type: 'button', class: 'link' }, t('app.cancel'));
  b.addEventListener('click', () => void run(() => tx.step('cancel')));
  return b;
}

/**
 * The action to show: the chosen alternative if still offered, else the first with a screen. An
 * action another offered screen covers (identify, under password with its identifier) is skipped.
 */
function pick(actions: NextAction[]): { action: NextAction; screen: Screen } | null {
  const covered = new Set(actions.flatMap((a) => SCREENS.get(a.type)?.supersedes ?? []));
  const usable = actions.filter((a) => SCREENS.has(a.type) && !covered.has(a.type));
  const action = usable.find((a) => a.type === chosen) ?? usable[0];
  if (!action) return null;
  return { action, screen: SCREENS.get(action.type) as Screen };
}

/**
 * Links to the other ways of the shown action's group (options.group, docs/signin.md
 * "Alternatives"); an action outside any group lists every other offered way that has a screen.
 */
function alternatives(actions: NextAction[], shown: Screen, action: NextAction): HTMLElement | null {
  const group = action.options?.group;
  const others = actions.filter(
    (a) =>
      a.type !== shown.type &&
      SCREENS.get(a.type)?.alternative &&
      !shown.supersedes?.includes(a.type) &&
      (group === undefined || a.options?.group === group),
  );
  if (others.length === 0) return null;
  return h(
    'div',
    { class: 'alternatives' },
    ...others.map((a) => {
      const s = SCREENS.get(a.type) as Screen;
      const b = h('button', { type: 'button', class: 'link' }, t(s.alternative as MessageKey));
      b.addEventListener('click', () => {
        chosen = a.type;
        render(current, null);
      });
      return b;
    }),
  );
}

/**
 * The line under the title: what this sign-in (or registration) leads to. The built-in account
 * page is named in the page's own language, not by its client name.
 */
function subtitleOf(state: TxState, shown: string): string {
  const registering = shown === 'register';
  if (state.client.client_id === ACCOUNT_CLIENT)
    return t(registering ? 'app.registering_account' : 'app.signing_in_account');
  return t(registering ? 'app.registering_for' : 'app.signing_in_to', { client: state.client.name });
}

let current: TxState;
/** The waiting passkey autofill request, ended whenever the page shows something new. */
let conditional: AbortController | null = null;
let autofillUsed = false;

/**
 * Before anyone is identified, a realm with passkey sign-in offers the account's passkeys in the
 * username field's autofill (conditional mediation); picking one signs in without a password.
 */
function offerPasskeyAutofill(state: TxState, ctx: ScreenContext): void {
  if (
    autofillUsed ||
    !state.next_actions.some((a) => a.type === 'webauthn') ||
    state.completed_factors.length > 0
  )
    return;
  const input = app.querySelector<HTMLInputElement>('input[autocomplete="username"]');
  if (!input) return;
  input.setAttribute('autocomplete', 'username webauthn');
  const controller = new AbortController();
  conditional = controller;
  void (async () => {
    if (!(await conditionalAvailable()) || controller.signal.aborted) return;
    try {
      const options = await ctx.send('webauthn/options');
      const credential = await getPasskey(options.webauthn, { conditional: true, signal: controller.signal });
      // One passkey picked from the autofill per page: after a refusal the button is the way on.
      autofillUsed = true;
      await ctx.step('webauthn/verify', { credential }, { failed: 'passkey.failed' });
    } catch (e) {
      // The autofill is an offer: a failure says so once and never restarts it by itself.
      if (controller.signal.aborted || wasCancelled(e)) return;
      console.error('passkey autofill', e);
      app.querySelector('h1')?.after(alert(t('passkey.failed')));
    }
  })();
}

/** Shows a state: recovery codes first, then a redirect, an error or the next screen. */
function render(state: TxState, message: HTMLElement | null): void {
  conditional?.abort();
  conditional = null;
  current = state;
  if (state.one_time?.totp) totp = state.one_time.totp;
  const codes = state.one_time?.recovery_codes;
  if (codes && codes.length > 0) {
    const rest = { ...state, one_time: undefined };
    show(
      t('codes.title'),
      recoveryCodesView(codes, () => render(rest, null)),
    );
    return;
  }
  // A device sign-in ends here: the device itself gets the tokens (docs/oauth-device.md).
  if (state.intent === 'device' && (state.status === 'completed' || state.status === 'cancelled')) {
    const done = state.status === 'completed';
    show(t(done ? 'device.done_title' : 'device.title'), notice(t(done ? 'device.done' : 'device.denied')));
    return;
  }
  // Back to the application: after success, a cancel or a denial (it hears the error). Too many
  // failures is explained first, with the way back as a link.
  if (state.redirect_to && state.error !== 'too_many_failures') {
    if (state.status === 'completed') markFinished(tx.id);
    show(t('app.title'), notice(t(state.status === 'completed' ? 'app.redirecting' : 'app.returning')));
    location.assign(state.redirect_to);
    return;
  }
  // federation/start answered: on to the upstream provider.
  if (state.external_redirect && state.status === 'pending') {
    show(t('app.title'), notice(t('federation.leaving')));
    location.assign(state.external_redirect);
    return;
  }
  if (state.status !== 'pending') {
    const code = state.status === 'expired' ? 'expired' : (state.error ?? state.status);
    const back = state.redirect_to
      ? h('a', { class: 'button primary', href: state.redirect_to }, t('app.continue'))
      : h('p', {}, t('app.try_again'));
    show(t('app.title'), alert(describeCode(code)), back);
    return;
  }
  if (state.error) {
    show(t('app.title'), alert(describeCode(state.error)), cancelButton());
    return;
  }
  const picked = pick(state.next_actions);
  if (!picked) {
    const type = state.next_actions.map((a) => a.type).join(', ') || '-';
    show(t('app.title'), alert(t('app.no_screen', { type })), cancelButton());
    return;
  }
  if (picked.action.type !== 'enroll_totp') totp = null;
  const ctx: ScreenContext = {
    state,
    action: picked.action,
    totp,
    step: (path, body, opts) => run(() => tx.step(path, body ?? {}), opts, picked.action.type),
    send: (path, body) => tx.step(path, body ?? {}),
  };
  const subtitle = h('p', { class: 'subtitle' }, subtitleOf(state, picked.action.type));
  const upstream = state.next_actions.find((a) => a.type === 'external_redirect');
  show(
    t(picked.screen.titleOf?.(picked.action) ?? picked.screen.title),
    subtitle,
    state.notice === 'upstream_unavailable' ? alert(t('notice.upstream_unavailable')) : null,
    message,
    picked.screen.render(ctx),
    upstream && picked.action.type !== 'external_redirect' ? otherProviders(ctx, upstream) : null,
    alternatives(state.next_actions, picked.screen, picked.action),
    cancelButton(),
  );
  if (picked.action.type !== 'webauthn') offerPasskeyAutofill(state, ctx);
}

/**
 * After a spent password budget: the 429 names the mailbox ways still open (docs/signin.md, "A
 * spent password budget"); each becomes a button that shows its screen, identifying first with
 * the typed identifier when the transaction does not know it yet.
 */
function wayOut(e: unknown, state: TxState): HTMLElement | null {
  if (!(e instanceof ApiProblem) || state.status !== 'pending') return null;
  const ways = e.alternatives.filter((type) => SCREENS.get(type)?.alternative);
  if (ways.length === 0) return null;
  const buttons = ways.map((type) => {
    const b = h('button', { type: 'button' }, t(SCREENS.get(type)?.alternative as MessageKey));
    b.addEventListener('click', () => {
      chosen = type;
      if (state.next_actions.some((a) => a.type === type)) render(state, null);
      else void run(() => tx.step('identify', { identifier: typedIdentifierOf() }));
    });
    return b;
  });
  return h('div', { class: 'way-out' }, h('p', {}, t('lockout.way_out')), ...buttons);
}

/** Runs a call; a proof that was not accepted leaves its action offered and gets the failed notice. */
async function run(call: () => Promise<TxState>, opts: StepOptions = {}, actionType?: string): Promise<void> {
  const before = current;
  try {
    const next = await call();
    const stillOffered =
      next.status === 'pending' &&
      next.next_actions.some((a) => a.type === actionType) &&
      next.completed_factors.length === before?.completed_factors.length;
    render(next, opts.failed && stillOffered ? alert(t(opts.failed)) : null);
  } catch (e) {
    // The state may have moved on (or ended); show the error over a fresh read when possible.
    let fresh: TxState | null = null;
    try {
      fresh = await tx.read();
    } catch {
      // the transaction cannot be read any more: the error alone is shown
    }
    if (fresh) {
      render(fresh, alert(errorText(e)));
      const out = wayOut(e, fresh);
      if (out) app.querySelector('[role=alert]')?.after(out);
    } else showFailure(e);
  }
}

/**
 * The verification page of the device grant (?realm=R&mode=device[&user_code=C]): the person types
 * the code their device shows (or finds it filled in), then signs in as usual.
 */
function deviceEntry(realm: string, message: HTMLElement | null = null): void {
  const code = field(t('device.code'), {
    name: 'user_code',
    type: 'text',
    autocomplete: 'one-time-code',
    autocapitalize: 'characters',
    spellcheck: 'false',
    required: true,
    value: params.get('user_code') ?? '',
  });
  const form = stepForm(t('device.submit'), [code.wrap], async () => {
    try {
      const [started, state] = await Transaction.startDevice(apiBase(), realm, code.input.value.trim());
      tx = started;
      // The code is spent on this transaction: it leaves the address bar.
      params.delete('user_code');
      history.replaceState(null, '', `${location.pathname}?${params.toString()}`);
      render(state, null);
    } catch (e) {
      const bad = e instanceof ApiProblem && e.status === 400;
      deviceEntry(realm, alert(bad ? t('device.bad_code') : errorText(e)));
    }
  });
  show(t('device.title'), h('p', { class: 'subtitle' }, t('device.help')), message, form);
}

/**
 * The page a recovery's setup link opens (?realm=R&recovery_setup=TOKEN, docs/recovery.md): the
 * person chooses a new password, which spends the token; the token leaves the address bar at once.
 */
function recoverySetup(realm: string, token: string, message: HTMLElement | null = null): void {
  const password = field(t('recovery_setup.password'), {
    name: 'password',
    type: 'password',
    autocomplete: 'new-password',
    required: true,
    minlength: '8',
  });
  const form = stepForm(t('recovery_setup.submit'), [password.wrap], async () => {
    try {
      const res = await fetch(`${apiBase()}/api/v1/realms/${encodeURIComponent(realm)}/recovery-setup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token, password: password.input.value }),
      });
      if (res.status === 204) {
        show(t('recovery_setup.done_title'), h('p', {}, t('recovery_setup.done')));
        return;
      }
      if (res.status === 404) {
        show(t('recovery_setup.title'), alert(t('recovery_setup.invalid')));
        return;
      }
      const why = res.status === 422 ? t('recovery_setup.rejected') : describeCode('network');
      recoverySetup(realm, token, alert(why));
    } catch {
      recoverySetup(realm, token, alert(describeCode('network')));
    }
  });
  show(t('recovery_setup.title'), h('p', { class: 'subtitle' }, t('recovery_setup.help')), message, form);
}

/** Reads the realm's brand once and shows it on every screen from then on. */
async function useBrand(realm: string): Promise<void> {
  brand = await loadBrand(apiBase(), realm);
  applyColour(brand);
  brandTop = brandHeader(apiBase(), brand);
}

async function start(): Promise<void> {
  setLocale(pickLocale(params.get('ui_locales'), navigator.language));
  const id = params.get('transaction_id');
  const realm = params.get('realm');
  if (realm) await useBrand(realm);
  if (realm && !id && params.get('mode') === 'device') {
    deviceEntry(realm);
    return;
  }
  const setupToken = params.get('recovery_setup');
  if (realm && !id && setupToken) {
    params.delete('recovery_setup');
    history.replaceState(null, '', `${location.pathname}?${params.toString()}`);
    recoverySetup(realm, setupToken);
    return;
  }
  if (!id || !realm) {
    showFatal(t('app.missing_transaction'));
    return;
  }
  tx = new Transaction(apiBase(), realm, id);
  watchOtherTabs(id, () => {
    if (current?.status === 'pending') showFinishedElsewhere();
  });
  const magic = params.get('magic_link');
  try {
    const state = await tx.read();
    setLocale(pickLocale(state.locale, params.get('ui_locales'), ...navigator.languages));
    // Opened from a mailed magic link: answer it once, then drop the token from the address bar.
    if (magic && state.next_actions.some((a) => a.type === 'magic_link')) {
      params.delete('magic_link');
      history.replaceState(null, '', `${location.pathname}?${params.toString()}`);
      current = state;
      await run(() => tx.step('magic-link', { token: magic }), { failed: 'otp.failed' }, 'magic_link');
      return;
    }
    render(state, null);
  } catch (e) {
    // A link opened in a browser (or profile) other than the one that asked for it carries no
    // transaction cookie: say that, in words about the link.
    if (magic && e instanceof ApiProblem && e.code === 'forbidden' && !finishedElsewhere(id))
      showFatal(t('magic.other_browser'));
    else showFailure(e);
  }
}

void start();
