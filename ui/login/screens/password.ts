// password {password, identifier?}: the first factor. When nobody is identified yet the server
// offers it with an identifier field, and this screen asks for both at once.
import { field, h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { codeField } from './code-input.js';
import { stepForm } from './form.js';
import type { Screen, ScreenContext } from './screen.js';
import { sessionOptions } from './session-options.js';

/**
 * The identifier typed on this page. Once the transaction knows who signs in, the password form
 * still shows it (read-only) in a username field, so password managers pair the two fields after
 * a wrong password too.
 */
let typedIdentifier = '';
export const rememberIdentifier = (value: string): void => {
  typedIdentifier = value;
};
export const typedIdentifierOf = (): string => typedIdentifier;

/** The reset code mailed by password/reset; a new password follows (update_password). */
function resetForm(ctx: ScreenContext): HTMLElement {
  const code = codeField(t('otp.code'), 'code', true);
  return stepForm(t('otp.submit'), [h('p', {}, t('reset.sent')), code.wrap], () =>
    ctx.step('otp/verify', { code: code.input.value.replace(/\s/g, '') }, { failed: 'otp.failed' }),
  );
}

export const passwordScreen: Screen = {
  type: 'password',
  supersedes: ['identify'],
  title: 'password.title',
  titleOf: (action) => (action.options?.reset_code_sent === true ? 'reset.title' : 'password.title'),
  alternative: 'alt.password',
  render(ctx) {
    const needsIdentifier = ctx.action.fields.includes('identifier');
    const id = field(t('password.identifier'), {
      name: 'identifier',
      type: 'text',
      autocomplete: 'username',
      required: true,
      autocapitalize: 'none',
      spellcheck: 'false',
    });
    const pw = field(t('password.password'), {
      name: 'password',
      type: 'password',
      autocomplete: 'current-password',
      required: true,
    });
    if (ctx.action.options?.reset_code_sent === true) return resetForm(ctx);
    const options = sessionOptions();
    const who = ctx.state.user?.email_hint ?? ctx.state.user?.display_name;
    const known = !needsIdentifier && typedIdentifier !== '';
    if (known) {
      id.input.value = typedIdentifier;
      id.input.readOnly = true;
    }
    const fields = needsIdentifier || known ? [id.wrap, pw.wrap] : [pw.wrap];
    if (!needsIdentifier && !known && who) fields.unshift(h('p', { class: 'who' }, who));
    // A forgotten password: the server offers a reset (an emailed code) for an email identifier.
    const extra: HTMLElement[] = [];
    const identify = ctx.state.next_actions.find((a) => a.type === 'identify');
    // Identify first when nobody is yet (the identifier typed above), then take the other way.
    const identified = async (): Promise<boolean> => {
      if (!needsIdentifier) return true;
      if (!id.input.reportValidity()) return false;
      rememberIdentifier(id.input.value.trim());
      await ctx.send('identify', { identifier: id.input.value.trim() });
      return true;
    };
    if (ctx.action.options?.reset === true || identify?.options?.password_reset === true) {
      const forgot = h('button', { type: 'button', class: 'link' }, t('reset.forgot'));
      forgot.addEventListener('click', () => {
        void identified().then((ok) => (ok ? ctx.step('password/reset', {}) : undefined));
      });
      extra.push(forgot);
    }
    if (needsIdentifier && identify?.options?.other_methods === true) {
      const other = h('button', { type: 'button', class: 'link' }, t('password.other_methods'));
      // identify itself is the other way: one request, not identified() and then identify again
      // (a second identify on the moved-on transaction is a conflict).
      other.addEventListener('click', () => {
        if (!id.input.reportValidity()) return;
        rememberIdentifier(id.input.value.trim());
        void ctx.step('identify', { identifier: id.input.value.trim() });
      });
      extra.push(other);
    }
    return stepForm(
      t('password.submit'),
      [...fields, options.element],
      async () => {
        await options.apply(ctx);
        const body: Record<string, unknown> = { password: pw.input.value };
        if (needsIdentifier) {
          body.identifier = id.input.value.trim();
          rememberIdentifier(body.identifier as string);
        }
        await ctx.step('password', body, { failed: 'password.failed' });
      },
      extra,
    );
  },
};
