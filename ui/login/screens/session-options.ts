// Remember-me and transient sign-in: steps allowed at any time while pending, offered with the
// first factor. A transient sign-in is never remembered, so only one of them is sent.
import { checkbox, h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import type { ScreenContext } from './screen.js';

export function sessionOptions(): { element: HTMLElement; apply(ctx: ScreenContext): Promise<void> } {
  const remember = checkbox(t('session.remember'), 'remember');
  const transient = checkbox(t('session.transient'), 'transient');
  const sync = () => {
    remember.input.disabled = transient.input.checked;
    if (transient.input.checked) remember.input.checked = false;
  };
  transient.input.addEventListener('change', sync);
  return {
    element: h('fieldset', { class: 'options' }, remember.wrap, transient.wrap),
    async apply(ctx) {
      if (transient.input.checked) await ctx.send('transient', { transient: true });
      else if (remember.input.checked) await ctx.send('remember-me', { remember: true });
    },
  };
}
