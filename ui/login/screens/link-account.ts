// link_account (spec doc 1): the upstream provider proved who this is, and the identity is linked
// to an existing account only after that account signs in here, with its password (shown) or
// another of the offered ways (email code, sign-in link, passkey; never a text message).
import { h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { passwordScreen } from './password.js';
import type { Screen } from './screen.js';

export const linkAccountScreen: Screen = {
  type: 'link_account',
  supersedes: ['password', 'identify'],
  title: 'link.title',
  render(ctx) {
    const o = ctx.action.options ?? {};
    const provider = (o.provider as { display_name?: string } | undefined)?.display_name ?? '';
    const email = typeof o.email_hint === 'string' ? o.email_hint : '';
    const intro =
      o.conflict === true ? t('link.conflict', { provider, email }) : t('link.help', { provider });
    const password = ctx.state.next_actions.find((a) => a.type === 'password');
    return h(
      'div',
      { class: 'link-account' },
      h('p', { class: 'notice', role: 'status' }, intro),
      password ? passwordScreen.render({ ...ctx, action: password }) : null,
    );
  },
};
