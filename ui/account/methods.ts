// The account page's sign-in methods (docs/login-ui.md, "Account page"): password change, the
// authenticator app (TOTP), passkeys, recovery codes, a one-time-code token (HOTP) and remembered
// devices, each through its self-service path under /me. The API decides what is allowed (MFA,
// recent sign-in, recovery restriction); the page shows its refusal in words.
import { field, h, passwordField } from '../lib/dom.js';
import { t } from '../lib/i18n.js';
import { createPasskey, passkeysSupported, wasCancelled } from '../lib/passkey.js';
import { qrSvg } from '../lib/qr.js';
import { recoveryCodesView } from '../login/recovery-codes.js';
import { codeField } from '../login/screens/code-input.js';
import { grouped } from '../login/screens/enroll-totp.js';
import type { Api } from './api.js';
import { deviceName } from './words.js';

/** What a section needs from the page: the API and a way to show the outcome. */
export interface View {
  api: Api;
  locale: string;
  /** Reads everything again and shows the page, with a notice above when given. */
  refresh(notice?: string): Promise<void>;
  /** Shows the page again with the refusal in words (and a way to sign in again when it helps). */
  fail(e: unknown): Promise<void>;
}

/** What GET /me/factors says the account holds. */
export interface Factors {
  totp: boolean;
  hotp: boolean;
  passkeys: number;
  recovery_codes_remaining: number;
  remembered_devices: { id: string; user_agent: string | null; created_at: string; expires_at: string }[];
}

export interface Passkey {
  id: string;
  name: string | null;
  created_at: string;
  last_used_at?: string | null;
}

const when = (view: View, iso: string) => new Date(iso).toLocaleString(view.locale);

function section(id: string, title: string, ...content: (HTMLElement | null)[]): HTMLElement {
  return h('section', { 'aria-labelledby': id }, h('h3', { id }, title), ...content);
}

/** Runs a write; its refusal goes to view.fail, its success to `then`. */
function act(view: View, run: () => Promise<unknown>, then: (r: unknown) => void | Promise<void>) {
  void (async () => {
    let result: unknown;
    try {
      result = await run();
    } catch (e) {
      await view.fail(e);
      return;
    }
    await then(result);
  })();
}

/** Replaces a section's body (everything after its heading) with one step of a flow. */
function replaceBody(sec: HTMLElement, ...content: HTMLElement[]): void {
  const heading = sec.firstElementChild;
  sec.replaceChildren(...(heading ? [heading] : []), ...content);
  const first = sec.querySelector<HTMLElement>('input, button');
  first?.focus();
}

/** The recovery codes an action answered, shown once; Continue shows the page again. */
function showCodes(view: View, sec: HTMLElement, codes: string[], notice: string): void {
  replaceBody(
    sec,
    h('p', { class: 'notice', role: 'status' }, notice),
    recoveryCodesView(codes, () => void view.refresh(notice)),
  );
}

function passwordSection(view: View): HTMLElement {
  const current = field(t('acct.pw_current'), {
    name: 'current_password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const next = passwordField(t('acct.pw_new'), t('acct.pw_rule'), {
    name: 'new_password',
    autocomplete: 'new-password',
    minlength: '8',
    required: true,
  });
  const form = h(
    'form',
    {},
    h('p', { class: 'small' }, t('acct.pw_help')),
    current.wrap,
    next.wrap,
    h('button', { type: 'submit', class: 'primary' }, t('acct.pw_submit')),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    act(
      view,
      () =>
        view.api.call('POST', '/me/password', {
          current_password: current.input.value,
          new_password: next.input.value,
        }),
      (r) => {
        const ended = (r as { sessions_revoked?: number } | null)?.sessions_revoked ?? 0;
        return view.refresh(ended > 0 ? t('acct.pw_changed_ended', { n: ended }) : t('acct.pw_changed'));
      },
    );
  });
  return section('m-password', t('acct.pw_title'), form);
}

/** TOTP and HOTP share the shape: enroll gives a secret, activate proves the app or token has it. */
function otpSection(view: View, kind: 'totp' | 'hotp', enrolled: boolean): HTMLElement {
  const k = kind === 'totp' ? 'acct.totp' : 'acct.hotp';
  // Setting up again replaces what the account has.
  const start = h(
    'button',
    { type: 'button', class: 'secondary' },
    t(enrolled ? `${k}_replace` : `${k}_setup`),
  );
  const sec = section(
    `m-${kind}`,
    t(`${k}_title`),
    h('p', { class: 'small' }, t(`${k}_help`)),
    h(
      'p',
      { class: 'state', 'data-state': enrolled ? 'on' : 'off' },
      t(enrolled ? 'acct.state_on' : 'acct.state_off'),
    ),
    h('div', { class: 'actions' }, start),
  );
  start.addEventListener('click', () =>
    act(
      view,
      () => view.api.call('POST', `/me/${kind}/enroll`),
      (r) => {
        const e = r as { secret: string; otpauth_uri: string };
        const code = codeField(t(`${k}_code`), 'code', true);
        const cancel = h('button', { type: 'button', class: 'link' }, t('acct.cancel'));
        cancel.addEventListener('click', () => void view.refresh());
        const form = h(
          'form',
          {},
          h('p', {}, t(kind === 'totp' ? 'enroll.help' : 'acct.hotp_enroll_help')),
          kind === 'totp' ? h('div', { class: 'qr-box' }, qrSvg(e.otpauth_uri, t('enroll.qr_label'))) : null,
          h('p', { class: 'small' }, t('enroll.manual')),
          h('p', { class: 'secret', 'data-secret': e.secret }, grouped(e.secret)),
          code.wrap,
          h(
            'div',
            { class: 'actions' },
            h('button', { type: 'submit', class: 'primary' }, t('enroll.submit')),
            cancel,
          ),
        );
        form.addEventListener('submit', (ev) => {
          ev.preventDefault();
          act(
            view,
            () =>
              view.api.call('POST', `/me/${kind}/activate`, { code: code.input.value.replace(/\s/g, '') }),
            (done) => {
              const codes = (done as { recovery_codes?: string[] }).recovery_codes;
              if (codes?.length) showCodes(view, sec, codes, t(`${k}_enabled`));
              else void view.refresh(t(`${k}_enabled`));
            },
          );
        });
        replaceBody(sec, form);
      },
    ),
  );
  if (enrolled) {
    const remove = h('button', { type: 'button', class: 'secondary' }, t(`${k}_remove`));
    remove.addEventListener('click', () =>
      act(
        view,
        () => view.api.call('DELETE', `/me/${kind}`),
        () => view.refresh(t(`${k}_removed`)),
      ),
    );
    sec.querySelector('.actions')?.append(remove);
  }
  return sec;
}

function passkeyItem(view: View, p: Passkey): HTMLElement {
  const name = p.name ?? t('acct.pk_unnamed');
  const rename = h(
    'button',
    { type: 'button', class: 'secondary', 'aria-label': t('acct.pk_rename_named', { name }) },
    t('acct.pk_rename'),
  );
  const remove = h(
    'button',
    { type: 'button', class: 'secondary', 'aria-label': t('acct.pk_remove_named', { name }) },
    t('acct.pk_remove'),
  );
  const li = h(
    'li',
    {},
    h(
      'div',
      {},
      h('strong', {}, name),
      h('br'),
      h('span', { class: 'small' }, t('acct.pk_added', { time: when(view, p.created_at) })),
    ),
    h('div', { class: 'actions' }, rename, remove),
  );
  remove.addEventListener('click', () =>
    act(
      view,
      () => view.api.call('DELETE', `/me/webauthn/credentials/${encodeURIComponent(p.id)}`),
      () => view.refresh(t('acct.pk_removed', { name })),
    ),
  );
  rename.addEventListener('click', () => {
    const input = field(t('acct.pk_new_name'), {
      name: 'name',
      type: 'text',
      value: name,
      maxlength: '64',
      required: true,
    });
    const cancel = h('button', { type: 'button', class: 'link' }, t('acct.cancel'));
    cancel.addEventListener('click', () => void view.refresh());
    const form = h(
      'form',
      {},
      input.wrap,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'submit', class: 'primary' }, t('acct.save')),
        cancel,
      ),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const fresh = input.input.value.trim();
      act(
        view,
        () => view.api.call('PATCH', `/me/webauthn/credentials/${encodeURIComponent(p.id)}`, { name: fresh }),
        () => view.refresh(t('acct.pk_renamed', { name: fresh })),
      );
    });
    li.replaceChildren(form);
    input.input.focus();
    input.input.select();
  });
  return li;
}

function passkeySection(view: View, passkeys: Passkey[]): HTMLElement {
  const list =
    passkeys.length > 0
      ? h('ul', { class: 'passkeys' }, ...passkeys.map((p) => passkeyItem(view, p)))
      : h('p', {}, t('acct.pk_none'));
  if (!passkeysSupported())
    return section(
      'm-passkeys',
      t('acct.pk_title'),
      list,
      h('p', { class: 'small' }, t('passkey.unsupported')),
    );
  const name = field(t('enroll_passkey.name'), {
    name: 'passkey_name',
    type: 'text',
    maxlength: '64',
    autocomplete: 'off',
  });
  const add = h('form', {}, name.wrap, h('button', { type: 'submit', class: 'secondary' }, t('acct.pk_add')));
  const sec = section(
    'm-passkeys',
    t('acct.pk_title'),
    h('p', { class: 'small' }, t('enroll_passkey.help')),
    list,
    add,
  );
  add.addEventListener('submit', (e) => {
    e.preventDefault();
    const label = name.input.value.trim();
    act(
      view,
      async () => {
        const options = await view.api.call('POST', '/me/webauthn/registration-options');
        let credential: Record<string, unknown>;
        try {
          credential = await createPasskey(options);
        } catch (err) {
          // Closing the browser's prompt is no failure: nothing happened.
          if (wasCancelled(err)) return null;
          throw err;
        }
        return view.api.call('POST', '/me/webauthn/registration-complete', {
          credential,
          ...(label ? { name: label } : {}),
        });
      },
      (r) => {
        if (r === null) return view.refresh(t('passkey.cancelled'));
        const codes = (r as { recovery_codes?: string[] }).recovery_codes;
        if (codes?.length) showCodes(view, sec, codes, t('acct.pk_added_notice'));
        else void view.refresh(t('acct.pk_added_notice'));
      },
    );
  });
  return sec;
}

function recoveryCodesSection(view: View, remaining: number): HTMLElement {
  const regenerate = h('button', { type: 'button', class: 'secondary' }, t('acct.rc_regenerate'));
  const sec = section(
    'm-codes',
    t('acct.rc_title'),
    h('p', { class: 'small' }, t('acct.rc_help')),
    h(
      'p',
      { class: 'state', 'data-remaining': String(remaining) },
      t('acct.rc_remaining', { n: String(remaining) }),
    ),
    regenerate,
  );
  regenerate.addEventListener('click', () =>
    act(
      view,
      () => view.api.call('POST', '/me/recovery-codes/regenerate'),
      (r) => showCodes(view, sec, (r as { recovery_codes: string[] }).recovery_codes, t('acct.rc_done')),
    ),
  );
  return sec;
}

/** Remembered devices skip the second step; forgetting one asks for it again on that device. */
export function rememberedDevicesSection(view: View, devices: Factors['remembered_devices']): HTMLElement {
  const forgetAll = h('button', { type: 'button', class: 'secondary' }, t('acct.rd_forget'));
  forgetAll.addEventListener('click', () =>
    act(
      view,
      () => view.api.call('DELETE', '/me/remembered-devices'),
      () => view.refresh(t('acct.rd_forgotten')),
    ),
  );
  const items = devices.map((d) => {
    const forget = h('button', { type: 'button', class: 'link' }, t('acct.rd_forget_one'));
    forget.addEventListener('click', () =>
      act(
        view,
        () => view.api.call('DELETE', `/me/remembered-devices/${encodeURIComponent(d.id)}`),
        () => view.refresh(t('acct.rd_forgotten_one')),
      ),
    );
    return h(
      'li',
      { 'data-device': d.id },
      h('span', {}, t('acct.rd_item', { device: deviceName(d.user_agent), date: when(view, d.created_at) })),
      ' ',
      forget,
    );
  });
  return h(
    'section',
    { 'aria-labelledby': 'remembered' },
    h('h2', { id: 'remembered' }, t('acct.rd_title')),
    h('p', {}, t('acct.rd_help')),
    devices.length === 0
      ? h('p', { class: 'small' }, t('acct.rd_none'))
      : h('ul', { class: 'devices' }, ...items),
    forgetAll,
  );
}

export function signInMethods(view: View, passkeys: Passkey[], factors: Factors): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'methods', class: 'methods' },
    h('h2', { id: 'methods' }, t('acct.methods')),
    passwordSection(view),
    otpSection(view, 'totp', factors.totp),
    passkeySection(view, passkeys),
    recoveryCodesSection(view, factors.recovery_codes_remaining),
    otpSection(view, 'hotp', factors.hotp),
  );
}
