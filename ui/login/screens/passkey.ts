// webauthn: sign in with a passkey (webauthn/options, then webauthn/verify with the browser's
// answer). As the first screen it is passwordless; after a password it is the second factor.
import { h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { getPasskey, passkeysSupported, wasCancelled } from '../../lib/passkey.js';
import type { Screen, ScreenContext } from './screen.js';

async function signInWithPasskey(
  ctx: ScreenContext,
  opts: { conditional?: boolean; signal?: AbortSignal } = {},
): Promise<void> {
  const state = await ctx.send('webauthn/options');
  const credential = await getPasskey(state.webauthn, opts);
  await ctx.step('webauthn/verify', { credential }, { failed: 'passkey.failed' });
}

export const passkeyScreen: Screen = {
  type: 'webauthn',
  title: 'passkey.title',
  alternative: 'alt.webauthn',
  render(ctx) {
    if (!passkeysSupported()) return h('p', { class: 'alert', role: 'alert' }, t('passkey.unsupported'));
    const message = h('p', { role: 'status' });
    const button = h(
      'button',
      { type: 'button', class: 'primary', id: 'passkey-button' },
      t('passkey.submit'),
    );
    button.addEventListener('click', () => {
      if (button.disabled) return;
      button.disabled = true;
      message.textContent = '';
      signInWithPasskey(ctx)
        .catch((e) => {
          message.textContent = t(wasCancelled(e) ? 'passkey.cancelled' : 'passkey.failed');
        })
        .finally(() => {
          button.disabled = false;
        });
    });
    return h('div', {}, h('p', {}, t('passkey.help')), button, message);
  },
};
