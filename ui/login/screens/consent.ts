// consent {approve, scopes}: the user grants some or all requested scopes, or refuses. With
// third_party the client is not the realm owner's, and the screen warns before the choice.
import { checkbox, h } from '../../lib/dom.js';
import { type MessageKey, t } from '../../lib/i18n.js';
import type { Screen } from './screen.js';

const KNOWN = ['openid', 'profile', 'email', 'phone', 'offline_access'];
const describe = (scope: string) => (KNOWN.includes(scope) ? t(`scope.${scope}` as MessageKey) : scope);

export const consentScreen: Screen = {
  type: 'consent',
  title: 'consent.title',
  render(ctx) {
    const scopes = (ctx.action.options?.scopes ?? []) as string[];
    const boxes = scopes.map((s) => {
      const box = checkbox(describe(s), 'scope');
      box.input.value = s;
      box.input.checked = true;
      // openid is what the sign-in itself is; it cannot be left out.
      if (s === 'openid') box.input.disabled = true;
      return box;
    });
    const approve = h('button', { type: 'submit', class: 'primary' }, t('consent.approve'));
    const deny = h('button', { type: 'button', class: 'secondary' }, t('consent.deny'));
    // A registered client is someone else's application (docs/oauth-registration.md): say so before
    // the person decides.
    const thirdParty =
      ctx.action.options?.third_party === true
        ? [
            h(
              'p',
              { class: 'alert', role: 'alert', 'data-third-party': 'true' },
              t('consent.third_party', { client: ctx.state.client.name }),
            ),
          ]
        : [];
    const form = h(
      'form',
      {},
      ...thirdParty,
      h(
        'fieldset',
        {},
        h('legend', {}, t('consent.help', { client: ctx.state.client.name })),
        ...boxes.map((b) => b.wrap),
      ),
      h('div', { class: 'actions' }, approve, deny),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const granted = boxes.filter((b) => b.input.checked).map((b) => b.input.value);
      void ctx.step('consent', { approve: true, scopes: granted });
    });
    deny.addEventListener('click', () => ctx.step('consent', { approve: false }));
    return form;
  },
};
