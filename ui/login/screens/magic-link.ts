// magic_link: otp/send {purpose: magic_link} mails a link back to this page; opening it in this
// browser answers magic-link {token} (../main.ts reads the token from the URL).
import { h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { stepForm } from './form.js';
import type { Screen } from './screen.js';

export const magicLinkScreen: Screen = {
  type: 'magic_link',
  title: 'magic.title',
  alternative: 'alt.magic_link',
  render(ctx) {
    const send = () => ctx.step('otp/send', { purpose: 'magic_link' });
    if (ctx.action.options?.link_sent !== true)
      return stepForm(t('magic.send'), [h('p', {}, t('magic.help'))], send);
    const again = h('button', { type: 'button', class: 'link' }, t('magic.resend'));
    again.addEventListener('click', () => void send());
    return h('div', {}, h('p', { role: 'status' }, t('magic.sent')), again);
  },
};
