// enroll_webauthn: create a passkey during sign-in (webauthn/registration-options, then
// webauthn/register {credential, name}). Refusals by the realm's passkey policy come back as
// problems the controller explains (code.authenticator_not_allowed, ...).
import { field, h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { createPasskey, passkeysSupported, wasCancelled } from '../../lib/passkey.js';
import { stepForm } from './form.js';
import type { Screen } from './screen.js';

export const enrollPasskeyScreen: Screen = {
  type: 'enroll_webauthn',
  title: 'enroll_passkey.title',
  alternative: 'alt.enroll_webauthn',
  render(ctx) {
    if (!passkeysSupported()) return h('p', { class: 'alert', role: 'alert' }, t('passkey.unsupported'));
    const name = field(t('enroll_passkey.name'), { name: 'passkey-name', type: 'text', maxlength: '64' });
    const message = h('p', { role: 'status' });
    return stepForm(
      t('enroll_passkey.submit'),
      [h('p', {}, t('enroll_passkey.help')), name.wrap],
      async () => {
        message.textContent = '';
        const state = await ctx.send('webauthn/registration-options');
        let credential: Record<string, unknown>;
        try {
          credential = await createPasskey(state.webauthn);
        } catch (e) {
          message.textContent = t(wasCancelled(e) ? 'passkey.cancelled' : 'passkey.failed');
          return;
        }
        const label = name.input.value.trim();
        await ctx.step('webauthn/register', { credential, ...(label ? { name: label } : {}) });
      },
      [message],
    );
  },
};
