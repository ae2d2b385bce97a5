// The account page (docs/login-ui.md): signs in through the realm's authorization endpoint, then
// shows who is signed in (UserInfo) and their sessions, with ending one and signing out everywhere.
import { applyColour, type Brand, brandHeader, loadBrand, supportLink } from '../lib/branding.js';
import { checkbox, h } from '../lib/dom.js';
import { describeCode, type MessageKey, pickLocale, setLocale, t } from '../lib/i18n.js';
import { finishSignIn, OAuthFailure, signIn, type Tokens } from './oauth.js';

const app = document.getElementById('app') as HTMLElement;
const params = new URLSearchParams(location.search);
/** The page's language; after a sign-in, the one the sign-in was asked in. */
let locale = pickLocale(params.get('ui_locales'), ...navigator.languages);

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

class ApiFailure extends Error {
  constructor(readonly code: string) {
    super(code);
  }
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
  create.addEventListener('click', () => void signIn(realm, locale, 'create'));
  show(...(message ? [message] : []), b, create);
  b.focus();
}

async function api(realm: string, token: string, method: string, path: string): Promise<unknown> {
  const res = await fetch(`/api/v1/realms/${encodeURIComponent(realm)}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/json',
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    },
    ...(method === 'POST' ? { body: '{}' } : {}),
  });
  if (res.status === 204) return null;
  const body = (await res.json().catch(() => ({}))) as { code?: string };
  if (!res.ok) throw new ApiFailure(body.code ?? `http_${res.status}`);
  return body;
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

async function render(realm: string, tokens: Tokens, message?: HTMLElement): Promise<void> {
  let profile: Record<string, unknown>;
  let sessions: Session[];
  let linked: LinkedIdentity[];
  try {
    profile = await userinfo(realm, tokens);
    sessions = ((await api(realm, tokens.account, 'GET', '/me/sessions')) as { items: Session[] }).items;
    linked = (
      (await api(realm, tokens.account, 'GET', '/me/linked-identities')) as { items: LinkedIdentity[] }
    ).items;
  } catch (e) {
    signInAgain(realm, 'acct.sign_in_again', failure(e));
    return;
  }
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
  const list = h(
    'ul',
    { class: 'sessions' },
    ...sessions.map((s) => {
      const end = h('button', { type: 'button', class: 'secondary' }, t('acct.end'));
      end.addEventListener('click', () => void endSession(realm, tokens, s));
      return h(
        'li',
        {},
        h(
          'div',
          {},
          s.current ? h('strong', {}, `${t('acct.session_current')} · `) : null,
          `${t('acct.session_started', { time: when(s.created_at) })}, ${t('acct.session_seen', { time: when(s.last_seen_at) })}`,
          h('br'),
          h('span', { class: 'small' }, t('acct.session_methods', { methods: s.amr.join(', ') })),
          s.user_agent ? h('span', { class: 'small ua' }, s.user_agent) : null,
        ),
        end,
      );
    }),
  );
  const endAll = h('button', { type: 'button', class: 'danger' }, t('acct.end_all'));
  endAll.addEventListener('click', () => void signOutEverywhere(realm, tokens));
  const remove = deleteAccountControl(realm, tokens);
  show(
    ...(message ? [message] : []),
    h('section', { 'aria-labelledby': 'who' }, h('h2', { id: 'who' }, t('acct.who')), who),
    h(
      'section',
      { 'aria-labelledby': 'sessions' },
      h('h2', { id: 'sessions' }, t('acct.sessions')),
      sessions.length > 0 ? list : h('p', {}, t('acct.no_sessions')),
      endAll,
    ),
    h(
      'section',
      { 'aria-labelledby': 'linked' },
      h('h2', { id: 'linked' }, t('acct.linked')),
      linkedList(realm, tokens, linked),
    ),
    h('section', { 'aria-labelledby': 'delete' }, h('h2', { id: 'delete' }, t('acct.delete_title')), remove),
  );
}

/** The accounts of upstream providers that sign in to this one, each with Remove. */
function linkedList(realm: string, tokens: Tokens, linked: LinkedIdentity[]): HTMLElement {
  if (linked.length === 0) return h('p', {}, t('acct.no_linked'));
  return h(
    'ul',
    { class: 'linked' },
    ...linked.map((l) => {
      const unlink = h('button', { type: 'button', class: 'secondary' }, t('acct.unlink'));
      unlink.addEventListener('click', () => {
        void (async () => {
          try {
            await api(realm, tokens.account, 'DELETE', `/me/linked-identities/${encodeURIComponent(l.id)}`);
          } catch (e) {
            await render(realm, tokens, failure(e));
            return;
          }
          await render(realm, tokens);
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
function deleteAccountControl(realm: string, tokens: Tokens): HTMLElement {
  const confirm = checkbox(t('acct.delete_confirm'), 'confirm-delete');
  const button = h('button', { type: 'button', class: 'danger' }, t('acct.delete'));
  button.addEventListener('click', () => {
    if (!confirm.input.checked) {
      confirm.input.focus();
      return;
    }
    void (async () => {
      try {
        await api(realm, tokens.account, 'POST', '/me/deletion');
      } catch (e) {
        await render(realm, tokens, failure(e));
        return;
      }
      signInAgain(realm, 'acct.sign_in', h('p', { class: 'notice', role: 'status' }, t('acct.deleted')));
    })();
  });
  return h('div', {}, h('p', {}, t('acct.delete_help')), confirm.wrap, button);
}

function failure(e: unknown): HTMLElement {
  const code = e instanceof ApiFailure || e instanceof OAuthFailure ? e.code : 'network';
  return h('p', { class: 'alert', role: 'alert' }, describeCode(code));
}

async function endSession(realm: string, tokens: Tokens, s: Session): Promise<void> {
  try {
    await api(realm, tokens.account, 'DELETE', `/me/sessions/${encodeURIComponent(s.id)}`);
  } catch (e) {
    await render(realm, tokens, failure(e));
    return;
  }
  // Ending this browser's own session ends the tokens of this page too.
  if (s.current) signInAgain(realm, 'acct.sign_in');
  else await render(realm, tokens);
}

async function signOutEverywhere(realm: string, tokens: Tokens): Promise<void> {
  try {
    await api(realm, tokens.account, 'POST', '/me/sessions/revoke-all');
  } catch (e) {
    await render(realm, tokens, failure(e));
    return;
  }
  signInAgain(realm, 'acct.sign_in', h('p', { class: 'notice', role: 'status' }, t('acct.ended_all')));
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
      await render(realm, tokens);
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
  await signIn(params.get('realm') ?? 'main', locale, params.has('register') ? 'create' : undefined);
}

void start();
