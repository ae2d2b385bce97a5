// challenge {provider_response}: the realm's authentication-flow rules ask for a check. A
// provider's widget cannot run under this page's Content-Security-Policy, so the reference UI
// takes the provider's response token as text (a hosted UI embeds the widget instead). When the
// action offers the emailed-code alternative (options.email_code), challenge/send mails a code and
// challenge {code} answers with it.
import { field, h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { codeField } from './code-input.js';
import { stepForm } from './form.js';
import type { Screen, ScreenContext } from './screen.js';

/** The transaction a challenge code was mailed for: its screen then asks for the code. */
let mailedFor: string | null = null;

function mailCode(ctx: ScreenContext): Promise<void> {
  mailedFor = ctx.state.id;
  return ctx.step('challenge/send');
}

function codeForm(ctx: ScreenContext): HTMLElement {
  const code = codeField(t('otp.code'), 'code', true);
  const again = h('button', { type: 'button', class: 'link' }, t('otp.resend'));
  again.addEventListener('click', () => void mailCode(ctx));
  return stepForm(
    t('otp.submit'),
    [h('p', {}, t('otp.email_sent')), code.wrap],
    () => ctx.step('challenge', { code: code.input.value.replace(/\s/g, '') }, { failed: 'otp.failed' }),
    [again],
  );
}

export const challengeScreen: Screen = {
  type: 'challenge',
  title: 'challenge.title',
  render(ctx) {
    const emailCode = ctx.action.options?.email_code === true;
    if (emailCode && mailedFor === ctx.state.id) return codeForm(ctx);
    const mailMe = h('button', { type: 'button', class: 'link' }, t('challenge.email_send'));
    mailMe.addEventListener('click', () => void mailCode(ctx));
    const response = field(t('challenge.response'), {
      name: 'provider_response',
      type: 'text',
      required: true,
      autocapitalize: 'none',
      spellcheck: 'false',
    });
    return stepForm(
      t('challenge.submit'),
      [h('p', {}, t('challenge.help')), response.wrap],
      () =>
        ctx.step(
          'challenge',
          { provider_response: response.input.value.trim() },
          { failed: 'challenge.failed' },
        ),
      emailCode ? [mailMe] : [],
    );
  },
};
