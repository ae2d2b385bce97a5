// remember-device {remember}: after a second factor, skip it on this browser next time? The
// server answers yes with the HttpOnly pa_rd cookie; this page never sees the token.
import { h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import type { Screen } from './screen.js';

export const rememberDeviceScreen: Screen = {
  type: 'remember_device',
  title: 'remember_device.title',
  render(ctx) {
    const yes = h('button', { type: 'submit', class: 'primary' }, t('remember_device.yes'));
    const no = h('button', { type: 'button', class: 'secondary' }, t('remember_device.no'));
    const form = h(
      'form',
      {},
      h('p', {}, t('remember_device.help')),
      h('div', { class: 'actions' }, yes, no),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void ctx.step('remember-device', { remember: true });
    });
    no.addEventListener('click', () => ctx.step('remember-device', { remember: false }));
    return form;
  },
};
