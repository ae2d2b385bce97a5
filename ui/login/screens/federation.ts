// Sign-in through an upstream provider (docs/login-ui.md): external_redirect lists the providers
// this sign-in may use. Beside the other screens they are buttons under a divider; when they are
// all that is offered (an organization that requires SSO) they are the screen. A button runs
// federation/start; the controller then sends the browser to the provider (external_redirect).
import { h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import type { NextAction } from '../../lib/transaction.js';
import type { Screen, ScreenContext } from './screen.js';

interface Provider {
  id: string;
  alias: string;
  display_name: string;
  adapter: string;
}

const providersOf = (action: NextAction): Provider[] =>
  Array.isArray(action.options?.providers) ? (action.options.providers as Provider[]) : [];

/** One button per provider: "Continue with Google". */
export function providerButtons(ctx: ScreenContext, action: NextAction): HTMLElement {
  const buttons = providersOf(action).map((p) => {
    const b = h(
      'button',
      { type: 'button', class: 'secondary provider', 'data-provider': p.alias, 'data-adapter': p.adapter },
      t('federation.continue_with', { provider: p.display_name }),
    );
    b.addEventListener('click', () => {
      b.disabled = true;
      void ctx.step('federation/start', { provider: p.alias }).finally(() => {
        b.disabled = false;
      });
    });
    return b;
  });
  return h('div', { class: 'providers' }, ...buttons);
}

/** The buttons beside another screen, under an "or" divider. */
export const otherProviders = (ctx: ScreenContext, action: NextAction): HTMLElement =>
  h(
    'div',
    { class: 'providers-block' },
    h('p', { class: 'divider' }, t('federation.or')),
    providerButtons(ctx, action),
  );

export const externalRedirectScreen: Screen = {
  type: 'external_redirect',
  title: 'federation.title',
  render(ctx) {
    return h('div', {}, h('p', {}, t('federation.help')), providerButtons(ctx, ctx.action));
  },
};
