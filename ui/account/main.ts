// The account page (docs/login-ui.md, "Account page"): signs in through the realm's authorization
// endpoint, then shows who is signed in and lets them manage their sign-in methods, remembered
// devices, sessions, linked accounts, personal data export, language and account, and sign out.
import { applyColour, type Brand, brandHeader, loadBrand, supportLink } from '../lib/branding.js';
import { checkbox, h, newId } from '../lib/dom.js';
import { describeCode, type MessageKey, pickLocale, SUPPORTED, setLocale, t } from '../lib/i18n.js';
import { en } from '../lib/messages.en.js';
import { type Api, ApiFailure, accountApi } from './api.js';
import { dataExportSection } from './data.js';
import { type Factors, type Passkey, rememberedDevicesSection, signInMethods, type View } from './methods.js';
import { finishSignIn, OAuthFailure, signIn, signOut, type Tokens } from './oauth.js';
import { deviceName, factorWords } from './words.js';

const app = document.getElementById('app') as HTMLElement;
const params = new URLSearchParams(location.search);
/** The language the user chose on this page, kept in this browser (docs/decisions.md). */
const LOCALE_KEY = 'proudauth.account.locale';
const storedLocale = () => {
  try {
    return localStorage.getItem(LOCALE_KEY);
  } catch {
    return null;
  }
};
/** The page's language: the one asked for, else the one chosen here before, else the browser's. */
let locale = pickLocale(params.get('ui_locales'), storedLocale(), ...navigator.languages);

interface Session {
  id: string;
  created_at: string;
  last_seen_at: string;
  amr: string[];
  current: boolean;
  user_agent: string | null;
  client_id: string | null;
}

interface LinkedIdentity {
  id: string;
  provider_display_name: string;
  upstream_email: string | null;
  created_at: string;
}

/** The realm's brand (docs/login-ui.md, "Branding"): its name and logo above, support below. */
let brand: Brand | null = null;
let brandTop: HTMLElement | null = null;

async function useBrand(realm: string): Promise<void> {
  brand = await loadBrand('', realm);
  applyColour(brand);
  brandTop = brandHeader('', brand);
}

function show(...content: HTMLElement[]): void {
  const heading = h('h1', { tabindex: '-1' }, t('acct.title'));
  const parts = [brandTop, heading, ...content, supportLink(brand)];
  app.replaceChildren(...parts.filter((c): c is HTMLElement => c !== null));
  document.title = brand ? `${t('acct.title')} · ${brand.display_name}` : t('acct.title');
}

function signInAgain(realm: string, label: MessageKey, message?: HTMLElement): void {
  const b = h('button', { type: 'button', class: 'primary' }, t(label));
  b.addEventListener('click', () => void signIn(realm, locale));
  const create = h('button', { type: 'button', class: 'link' }, t('acct.register'));
  create.addEventListener('click', () => void signIn(realm, locale, { prompt: 'create' }));
  show(...(message ? [message] : []), b, create);
  b.focus();
}

async function userinfo(realm: string, tokens: Tokens): Promise<Record<string, unknown>> {
  const res = await fetch(`/realms/${encodeURIComponent(realm)}/oauth/userinfo`, {
    headers: { authorization: `Bearer ${tokens.userinfo}`, accept: 'application/json' },
  });
  // Without UserInfo the ID token still says who this is.
  return res.ok ? ((await res.json()) as Record<string, unknown>) : tokens.idClaims;
}

const when = (iso: string) => new Date(iso).toLocaleString(locale);

function row(label: string, value: unknown): HTMLElement | null {
  return typeof value === 'string' && value !== ''
    ? h('div', {}, h('dt', {}, label), h('dd', {}, value))
    : null;
}

/** The signed-in page: what it shows, read again after every change. */
interface Signed {
  realm: string;
  tokens: Tokens;
  api: Api;
}

/**
 * A refusal in words. One that a fresh sign-in lifts (too old a sign-in, no second factor proved)
 * comes with a button that signs in again through the authorization endpoint: `prompt=login` and
 * `max_age=0`, so the realm asks for the password and the second factor again.
 */
function failure(s: Signed | null, e: unknown): HTMLElement {
  const code = e instanceof ApiFailure || e instanceof OAuthFailure ? e.code : 'network';
  // The login UI's words for a code speak of a sign-in; here some mean the account instead.
  const own = `acct.code.${code}`;
  const words = own in en ? t(own as MessageKey) : describeCode(code);
  const box = h('div', { class: 'alert', role: 'alert', tabindex: '-1' }, h('p', {}, words));
  if (s && e instanceof ApiFailure && e.needsReauth) {
    const again = h('button', { type: 'button', class: 'primary' }, t('acct.reauth'));
    again.addEventListener('click', () => void signIn(s.realm, locale, { prompt: 'login', max_age: '0' }));
    box.append(again);
  }
  return box;
}

const notice = (text: string) => h('p', { class: 'notice', role: 'status', tabindex: '-1' }, text);

function viewOf(s: Signed): View {
  return {
    api: s.api,
    locale,
    refresh: (text) => render(s, text ? notice(text) : undefined),
    fail: (e) => render(s, failure(s, e)),
  };
}

/** English and Deutsch, each named in its own language; the choice is kept in this browser. */
function languagePicker(s: Signed): HTMLElement {
  const id = newId('language');
  const select = h(
    'select',
    { id, name: 'language' },
    ...SUPPORTED.map((l) => h('option', { value: l, selected: l === locale }, t(`lang.${l}` as MessageKey))),
  );
  select.addEventListener('change', () => {
    locale = pickLocale(select.value);
    setLocale(locale);
    try {
      localStorage.setItem(LOCALE_KEY, locale);
    } catch {
      // Storage refused (private mode): the choice holds for this page only.
    }
    const kept = new URLSearchParams({ realm: s.realm, ui_locales: locale });
    history.replaceState(null, '', `${location.pathname}?${kept.toString()}`);
    void render(s).then(() => document.getElementById(id)?.focus());
  });
  // The new list keeps the same id, so focus returns to it after the page is drawn again.
  return h('div', { class: 'field language' }, h('label', { for: id }, t('acct.language')), select);
}

function sessionList(s: Signed, sessions: Session[]): HTMLElement {
  if (sessions.length === 0) return h('p', {}, t('acct.no_sessions'));
  return h(
    'ul',
    { class: 'sessions' },
    ...sessions.map((x) => {
      const device = deviceName(x.user_agent);
      const end = h(
        'button',
        { type: 'button', class: 'secondary', 'aria-label': t('acct.end_named', { device }) },
        t('acct.end'),
      );
      end.addEventListener('click', () => void endSession(s, x));
      return h(
        'li',
        {},
        h(
          'div',
          {},
          h('strong', { class: 'device' }, device),
          x.current ? h('span', { class: 'badge' }, t('acct.session_current')) : null,
          h('br'),
          h(
            'span',
            { class: 'small' },
            `${t('acct.session_started', { time: when(x.created_at) })}, ${t('acct.session_seen', { time: when(x.last_seen_at) })}`,
          ),
          h('br'),
          h(
            'span',
            { class: 'small methods-used' },
            t('acct.session_methods', { methods: factorWords(x.amr) }),
          ),
        ),
        end,
      );
    }),
  );
}

async function render(s: Signed, message?: HTMLElement): Promise<void> {
  let profile: Record<string, unknown>;
  let sessions: Session[];
  let linked: LinkedIdentity[];
  let passkeys: Passkey[];
  let factors: Factors;
  try {
    [profile, sessions, linked, passkeys, factors] = await Promise.all([
      userinfo(s.realm, s.tokens),
      s.api.call('GET', '/me/sessions').then((r) => (r as { items: Session[] }).items),
      s.api.call('GET', '/me/linked-identities').then((r) => (r as { items: LinkedIdentity[] }).items),
      s.api.call('GET', '/me/webauthn/credentials').then((r) => (r as { items: Passkey[] }).items),
      s.api.call('GET', '/me/factors').then((r) => r as Factors),
    ]);
  } catch (e) {
    signInAgain(s.realm, 'acct.sign_in_again', failure(null, e));
    return;
  }
  const view = viewOf(s);
  const who = h(
    'dl',
    { class: 'who-am-i' },
    ...[
      row(t('acct.name'), profile.name),
      row(t('acct.email'), profile.email),
      row(t('acct.username'), profile.preferred_username),
      row(t('acct.subject'), profile.sub),
    ].filter((x): x is HTMLElement => x !== null),
  );
  const out = h('button', { type: 'button', class: 'primary' }, t('acct.sign_out'));
  out.addEventListener('click', () => void signOutHere(s));
  const endAll = h('button', { type: 'button', class: 'danger' }, t('acct.end_all'));
  endAll.addEventListener('click', () => void signOutEverywhere(s));
  show(
    ...(message ? [message] : []),
    h(
      'section',
      { 'aria-labelledby': 'who' },
      h('h2', { id: 'who' }, t('acct.who')),
      who,
      h('div', { class: 'actions' }, out),
      languagePicker(s),
    ),
    signInMethods(view, passkeys, factors),
    rememberedDevicesSection(view, factors.remembered_devices),
    h(
      'section',
      { 'aria-labelledby': 'sessions' },
      h('h2', { id: 'sessions' }, t('acct.sessions')),
      sessionList(s, sessions),
      endAll,
    ),
    h(
      'section',
      { 'aria-labelledby': 'linked' },
      h('h2', { id: 'linked' }, t('acct.linked')),
      linkedList(s, linked),
    ),
    dataExportSection(view),
    h(
      'section',
      { 'aria-labelledby': 'delete' },
      h('h2', { id: 'delete' }, t('acct.delete_title')),
      deleteAccountControl(s),
    ),
  );
  // A message is what the user waits to hear about: it takes the focus (and the screen reader).
  message?.focus();
}

/** The accounts of upstream providers that sign in to this one, each with Remove. */
function linkedList(s: Signed, linked: LinkedIdentity[]): HTMLElement {
  if (linked.length === 0) return h('p', {}, t('acct.no_linked'));
  return h(
    'ul',
    { class: 'linked' },
    ...linked.map((l) => {
      const unlink = h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          'aria-label': t('acct.unlink_named', { provider: l.provider_display_name }),
        },
        t('acct.unlink'),
      );
      unlink.addEventListener('click', () => {
        void (async () => {
          try {
            await s.api.call('DELETE', `/me/linked-identities/${encodeURIComponent(l.id)}`);
          } catch (e) {
            await render(s, failure(s, e));
            return;
          }
          await render(s, notice(t('acct.unlinked', { provider: l.provider_display_name })));
        })();
      });
      return h(
        'li',
        {},
        h(
          'div',
          {},
          h('strong', {}, l.provider_display_name),
          l.upstream_email ? ` · ${l.upstream_email}` : null,
          h('br'),
          h('span', { class: 'small' }, t('acct.linked_since', { time: when(l.created_at) })),
        ),
        unlink,
      );
    }),
  );
}

/** Self-service deletion (POST /me/deletion): asked once more, then the page signs out. */
function deleteAccountControl(s: Signed): HTMLElement {
  const confirm = checkbox(t('acct.delete_confirm'), 'confirm-delete');
  const button = h('button', { type: 'button', class: 'danger' }, t('acct.delete'));
  button.addEventListener('click', () => {
    if (!confirm.input.checked) {
      confirm.input.focus();
      return;
    }
    void (async () => {
      let due: string | undefined;
      try {
        const r = (await s.api.call('POST', '/me/deletion')) as { deletion_due_at?: string } | null;
        due = r?.deletion_due_at;
      } catch (e) {
        await render(s, failure(s, e));
        return;
      }
      const text = due ? t('acct.deleted_on', { time: when(due) }) : t('acct.deleted');
      signInAgain(s.realm, 'acct.sign_in', notice(text));
    })();
  });
  return h('div', {}, h('p', {}, t('acct.delete_help')), confirm.wrap, button);
}

async function endSession(s: Signed, x: Session): Promise<void> {
  try {
    await s.api.call('DELETE', `/me/sessions/${encodeURIComponent(x.id)}`);
  } catch (e) {
    await render(s, failure(s, e));
    return;
  }
  // Ending this browser's own session ends the tokens of this page too.
  if (x.current) signInAgain(s.realm, 'acct.sign_in');
  else await render(s, notice(t('acct.ended', { device: deviceName(x.user_agent) })));
}

async function signOutEverywhere(s: Signed): Promise<void> {
  try {
    await s.api.call('POST', '/me/sessions/revoke-all');
  } catch (e) {
    await render(s, failure(s, e));
    return;
  }
  signInAgain(s.realm, 'acct.sign_in', notice(t('acct.ended_all')));
}

/** Sign out of this browser only: the realm's logout endpoint with the ID token as hint. */
async function signOutHere(s: Signed): Promise<void> {
  try {
    await signOut(s.realm, s.tokens.idToken);
  } catch (e) {
    await render(s, failure(s, e));
    return;
  }
  signInAgain(s.realm, 'acct.sign_in', notice(t('acct.signed_out')));
}

async function start(): Promise<void> {
  setLocale(locale);
  show(h('p', {}, t('acct.loading')));
  if (params.has('code') || params.has('error')) {
    try {
      const { realm, locale: asked, tokens } = await finishSignIn(params);
      locale = pickLocale(asked, locale);
      setLocale(locale);
      const kept = new URLSearchParams({ realm, ui_locales: locale });
      history.replaceState(null, '', `${location.pathname}?${kept.toString()}`);
      await useBrand(realm);
      await render({ realm, tokens, api: accountApi(realm, () => tokens.account) });
    } catch (e) {
      const realm = params.get('realm') ?? 'main';
      if (!brand) await useBrand(realm);
      const reason = describeCode(e instanceof OAuthFailure ? e.code : 'network');
      signInAgain(
        realm,
        'acct.sign_in',
        h('p', { class: 'alert', role: 'alert' }, t('acct.failed', { reason })),
      );
    }
    return;
  }
  // ?register: the realm's registration (prompt=create) instead of the sign-in.
  const realm = params.get('realm') ?? 'main';
  await signIn(realm, locale, params.has('register') ? { prompt: 'create' } : {});
}

void start();
