// select_account {continue}: prompt=select_account with a live session; keep it or start over.
import { h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import type { Screen } from './screen.js';

export const accountScreen: Screen = {
  type: 'select_account',
  title: 'account.title',
  render(ctx) {
    const name = ctx.state.user?.display_name ?? ctx.state.user?.email_hint ?? '';
    const keep = h('button', { type: 'button', class: 'primary' }, t('account.continue', { name }));
    const other = h('button', { type: 'button', class: 'secondary' }, t('account.other'));
    keep.addEventListener('click', () => ctx.step('account', { continue: true }));
    other.addEventListener('click', () => ctx.step('account', { continue: false }));
    return h('div', { class: 'actions' }, keep, other);
  },
};
