// email_otp, sms_otp, verify_email, verify_contact: a code sent by otp/send {purpose} and answered
// with otp/verify {code}. Before a code is out the screen offers to send one; after, it asks for
// the code and offers a new one.
import { h } from '../../lib/dom.js';
import { type MessageKey, t } from '../../lib/i18n.js';
import { codeField } from './code-input.js';
import { stepForm } from './form.js';
import type { Screen, ScreenContext } from './screen.js';

interface CodeTexts {
  title: MessageKey;
  alternative?: MessageKey;
  send: MessageKey;
  sent: MessageKey;
}

function codeScreen(type: string, texts: CodeTexts): Screen {
  return {
    type,
    title: texts.title,
    ...(texts.alternative ? { alternative: texts.alternative } : {}),
    render(ctx: ScreenContext) {
      const purpose = String(ctx.action.options?.purpose ?? 'login');
      const send = () => ctx.step('otp/send', { purpose });
      if (ctx.action.options?.code_sent !== true) {
        const who = ctx.state.user?.email_hint;
        return stepForm(t(texts.send), who ? [h('p', { class: 'who' }, who)] : [], send);
      }
      const code = codeField(t('otp.code'), 'code', true);
      const again = h('button', { type: 'button', class: 'link' }, t('otp.resend'));
      again.addEventListener('click', () => void send());
      return stepForm(
        t('otp.submit'),
        [h('p', {}, t(texts.sent)), code.wrap],
        () => ctx.step('otp/verify', { code: code.input.value.replace(/\s/g, '') }, { failed: 'otp.failed' }),
        [again],
      );
    },
  };
}

export const emailOtpScreen = codeScreen('email_otp', {
  title: 'otp.email_title',
  alternative: 'alt.email_otp',
  send: 'otp.email_send',
  sent: 'otp.email_sent',
});
export const smsOtpScreen = codeScreen('sms_otp', {
  title: 'otp.sms_title',
  alternative: 'alt.sms_otp',
  send: 'otp.sms_send',
  sent: 'otp.sms_sent',
});
export const verifyEmailScreen = codeScreen('verify_email', {
  title: 'verify.email_title',
  send: 'verify.email_send',
  sent: 'otp.email_sent',
});
export const verifyContactScreen = codeScreen('verify_contact', {
  title: 'verify.phone_title',
  send: 'otp.sms_send',
  sent: 'otp.sms_sent',
});
